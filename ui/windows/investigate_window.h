// InvestigateWindow: the plan view of "Investigate…" on a stored trial (core/investigate). It
// shows the planned variants (and the skipped ones with their reasons), the progress, a Cancel
// button, and the result as a ranked bar chart of effects (EffectChart) with the written verdict.
//
// It never starts a trial itself: each next trial of the plan is handed to `launch`, which
// AnalysisController wires to the TrialLauncher (the one launch path) and which tags the queued
// trial with the plan. What to run next is derived from the session file after each stored trial
// (onTrialStored), so a closed window or a crash resumes where it stopped: opening the window on
// the same trial continues its newest plan. Cancel stops queuing; the trial running finishes.
//
// Every read and write of the session (planning, the plan's trials of every arm, the attribution)
// runs as a BackgroundJob (plan_session.h); the window shows the result when it arrives, and a
// failure in its status line (and failed()), never as an exception in a slot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <QDialog>

#include "ui/windows/plan_session.h"

#include "core/investigate/investigation.h"

namespace tunebench::store {
class SessionStore;
}

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace tunebench::ui {

class EffectChart;

class InvestigateWindow : public QDialog {
  Q_OBJECT
 public:
  using Launch = std::function<void(const investigate::TrialRequest&)>;

  InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, BackgroundJobs* jobs,
                    QWidget* parent = nullptr);

  void setBudget(const investigate::Budget& budget) { m_budget = budget; }
  // Plans (or resumes the newest plan of the trial) and queues the first missing trial, in the
  // background; false when a step of the plan is still in flight. When the trial cannot be
  // investigated, errorText() and failed() say why.
  bool start();
  bool isRunning() const { return m_running; }
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

 public slots:
  // A trial was stored (any trial): when it is the plan's awaited one, refresh and queue the next.
  void onTrialStored();
  void cancel();

 signals:
  void investigationFinished(qint64 planId);
  void failed(const QString& message);

 private:
  struct View;  // what the window shows of the plan, read by a job
  static View readView(store::SessionStore& session, qint64 planId, const investigate::Budget& budget, bool withNext);
  template <class Result>
  void runJob(const QString& title, std::function<Result(store::SessionStore&)> read, std::function<void(Result)> show);
  void showView(const View& view);
  void launchNext(const View& view);
  void finish(const char* state);
  void fail(const QString& message);

  PlanJobs m_plan;
  QString m_path;
  qint64 m_trialId;
  Launch m_launch;
  investigate::Budget m_budget;
  qint64 m_planId = 0;
  bool m_running = false;
  int m_awaitingAfter = -1;  // finished trials when the awaited trial was queued
  QString m_error;
  QTableWidget* m_variants = nullptr;
  QListWidget* m_skipped = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_verdict = nullptr;
  EffectChart* m_chart = nullptr;
  QPushButton* m_cancel = nullptr;
};

}  // namespace tunebench::ui
