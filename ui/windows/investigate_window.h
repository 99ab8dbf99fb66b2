// InvestigateWindow: the plan view of "Investigate…" on a stored trial (core/investigate). It
// shows the planned variants (and the skipped ones with their reasons), the progress, a Cancel
// button, and the result as a ranked bar chart of effects (EffectChart) with the written verdict.
//
// It opens on the plan (prepare()): the variants and the budget (trials, minutes) first; Start
// runs it. It never starts a trial itself: each next trial of the plan is handed to `launch`,
// which AnalysisController wires to the TrialLauncher (the one launch path) and which tags the
// queued trial with the plan; the launcher's answer comes back through launchWaiting() (a launch
// preview asks first: said in the status line) and launchRefused() (the investigation pauses with
// the reason instead of waiting for a trial that never comes). What to run next is derived from
// the session file after each stored trial (onTrialStored), so a closed window or a crash resumes
// where it stopped: opening the window on the same trial continues its newest plan. Cancel stops
// queuing; the trial running finishes.
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
  using Launch = std::function<void(const investigate::TrialRequest&)>;

  InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, BackgroundJobs* jobs,
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
  bool isRunning() const { return m_running || m_starting; }
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
  // The trial handed to `launch` waits for the user's answer in a launch preview.
  void launchWaiting();
  // It was not started (refused, or the preview cancelled): the investigation pauses and says why.
  void launchRefused(const QString& reason);
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
  void showPlanned(const View& view);
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
  QPushButton* m_start = nullptr;
  QSpinBox* m_maxTrials = nullptr;
  QDoubleSpinBox* m_maxMinutes = nullptr;
  bool m_prepared = false;
  bool m_starting = false;        // Start's job is in flight
  bool m_cancelStarting = false;  // Cancel came while it was
};

}  // namespace tunebench::ui
