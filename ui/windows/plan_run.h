// PlanRun: the window's adapter of the plan driver (core/investigate/plan_driver.h), shared by
// Investigate… and Find the fastest….
//
// It feeds the driver what the window sees (Start, Cancel, the launcher's answers, the end of the
// plan's trial as the session stores it) and carries out what the driver returns: the plan's
// state, the next step read and its end stored as background jobs (PlanJobs), the next trial handed
// to the launcher, the plan's trial stopped. The rules are the driver's, so a Stop, a Cancel or a
// refusal ends the plan in the window as on the command line (core/investigate/plan_run.h).
// The windows only show what it says (statusChanged, stepRead, ended).
#pragma once

#include <functional>

#include <QObject>
#include <QString>

#include "core/investigate/plan_driver.h"
#include "core/investigate/plan_run.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class PlanJobs;

class PlanRun : public QObject {
  Q_OBJECT
 public:
  struct Hooks {
    // Hands a trial to the launcher: `queued(recordId)` once it is queued (at once, or after a
    // launch preview was accepted), `waiting()` while a preview asks, `refused(reason)` when it
    // will not run. Each may be called from inside `launch`.
    std::function<void(const investigate::TrialRequest& request, std::function<void(const QString&)> queued,
                       std::function<void()> waiting, std::function<void(const QString&)> refused)>
        launch;
    // Stops the trial `recordId` or drops it from the queue; its end comes back as trialEnded.
    std::function<void(const QString& recordId)> stop;
    // The session's store id of a record (0 when it is not stored).
    std::function<qint64(const QString& recordId)> storeId;
  };

  PlanRun(Hooks hooks, PlanJobs* jobs, QObject* parent = nullptr);

  // The plan it runs (set before start; a new plan replaces the driver).
  void setPlan(const investigate::PlanRef& plan);
  const investigate::PlanRef& plan() const { return m_plan; }
  // Start or Resume; false while it runs.
  bool start();
  void cancel();
  bool isActive() const { return m_driver.active(); }
  store::PlanState state() const { return m_driver.state(); }
  QString status() const { return QString::fromStdString(m_driver.status()); }
  const investigate::PlanDriver& driver() const { return m_driver; }

 public slots:
  // A trial of the window ended and its end is in the session (LiveTrialTracker::trialFinished,
  // and its removedFromQueue). Ends of trials that are not the plan's are ignored.
  void trialEnded(const tunebench::ui::TrialOutcome& outcome);

 signals:
  void statusChanged(const QString& text);
  // The plan's trials changed (a step was read): views re-read what they show.
  void stepRead(const tunebench::investigate::PlanStep& step);
  // The plan's end (its result and state) is in the session.
  void ended(tunebench::store::PlanState state);
  // A session read or write failed (the plan is paused with the sentence).
  void failed(const QString& message);

 private:
  void carryOut(investigate::PlanActions actions);

  Hooks m_hooks;
  PlanJobs* m_jobs;
  investigate::PlanRef m_plan;
  investigate::PlanDriver m_driver{investigate::PlanKind::Investigate, 0};
};

}  // namespace tunebench::ui
