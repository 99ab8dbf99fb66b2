// InvestigateWindow: the plan view of "Investigate…" on a stored trial (core/investigate). It
// shows the planned variants (and the skipped ones with their reasons), the progress, a Cancel
// button, and the result as a ranked bar chart of effects (EffectChart) with the written verdict.
//
// It opens on the plan (prepare()): the variants and the budget (trials, minutes) first; Start
// runs it. The plan is run by PlanRun (plan_run.h, the plan driver's window adapter): each next
// trial goes to the launcher through the hooks AnalysisController gives (the one launch path,
// tagged with the plan), and the trial's end comes back through trialEnded(). What to run next is
// derived from the session file after each stored trial, so a closed window or a crash resumes
// where it stopped: opening the window on the same trial continues its newest plan. A Stop on the
// plan's trial pauses the plan; Cancel stops the plan's trial and pauses; Resume continues.
//
// Every read and write of the session (planning, the plan's trials of every arm, the attribution)
// runs as a BackgroundJob (plan_session.h); the window shows the result when it arrives, and a
// failure in its status line (and failed()), never as an exception in a slot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <QDialog>

#include "ui/windows/plan_run.h"
#include "ui/windows/plan_session.h"

#include "core/investigate/investigation.h"

namespace tunebench::store {
class SessionStore;
}

class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace tunebench::ui {

class EffectChart;

class InvestigateWindow : public QDialog {
  Q_OBJECT
 public:
  InvestigateWindow(const QString& sessionPath, qint64 trialId, PlanRun::Hooks hooks, BackgroundJobs* jobs,
                    QWidget* parent = nullptr);

  // The budget fields' values (trials and minutes; 0: no limit) and the schedule's repeats.
  void setBudget(const investigate::Budget& budget);
  investigate::Budget budget() const;
  // Plans (or finds the newest plan of the trial) and shows it, in the background; runs nothing.
  // When the trial cannot be investigated, errorText() and failed() say why.
  bool prepare();
  bool isPrepared() const { return m_prepared; }
  // Start: (plans if not yet done and) queues the first missing trial within the budget, in the
  // background; false when it is running already.
  bool start();
  // Started (its first trial may still be being read): Cancel or the end stops it.
  bool isRunning() const;
  PlanRun* run() const { return m_run; }
  // A session read or write of this window is in flight.
  bool isBusy() const { return m_plan.isBusy(); }
  qint64 planId() const { return m_planId; }
  QString errorText() const { return m_error; }

  QTableWidget* variantsTable() const { return m_variants; }
  QListWidget* skippedList() const { return m_skipped; }
  QProgressBar* progressBar() const { return m_progress; }
  QLabel* statusLabel() const { return m_status; }
  QLabel* verdictLabel() const { return m_verdict; }
  EffectChart* chart() const { return m_chart; }
  QPushButton* cancelButton() const { return m_cancel; }
  QPushButton* startButton() const { return m_start; }

 public slots:
  // A trial of the window ended (any trial): the plan's own moves the plan on (PlanRun).
  void trialEnded(const tunebench::ui::TrialOutcome& outcome);
  // Stops the plan's trial, if one runs, and pauses the plan.
  void cancel();

 signals:
  void investigationFinished(qint64 planId);
  void failed(const QString& message);

 private:
  struct View;  // what the window shows of the plan, read by a job
  static View readView(store::SessionStore& session, qint64 planId);
  void refreshView();
  void showView(const View& view);
  void showPlanned(const View& view);
  void runPlan(qint64 planId);
  void ended(store::PlanState state);
  void setIdleControls();
  void fail(const QString& message);

  PlanJobs m_plan;
  PlanRun* m_run = nullptr;
  QString m_path;
  qint64 m_trialId;
  investigate::Budget m_budget;
  qint64 m_planId = 0;
  bool m_complete = false;  // the last read found nothing left to run even without a budget
  QString m_error;
  QTableWidget* m_variants = nullptr;
  QListWidget* m_skipped = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_verdict = nullptr;
  EffectChart* m_chart = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_start = nullptr;
  QSpinBox* m_maxTrials = nullptr;
  QDoubleSpinBox* m_maxMinutes = nullptr;
  bool m_prepared = false;
  bool m_starting = false;        // Start's job is in flight
  bool m_cancelStarting = false;  // Cancel came while it was
};

}  // namespace tunebench::ui
