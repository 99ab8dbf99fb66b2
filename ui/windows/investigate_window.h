// InvestigateWindow: the plan view of "Investigate…" on a stored trial (core/investigate). It
// shows the planned variants (and the skipped ones with their reasons), the progress, a Cancel
// button, and the result as a ranked bar chart of effects (EffectChart) with the written verdict.
//
// It opens on the plan (prepare()): the variants and the budget (trials, minutes) first; Start
// runs it. It never starts a trial itself: each next trial of the plan is handed to `launch`,
// which the main window wires to its TrialLauncher (the one launch path) and which tags the queued
// trial with the plan; the launcher's answer comes back through launchWaiting() (a launch preview
// asks first: said in the status line) and launchRefused() (the investigation pauses with the
// reason instead of waiting for a trial that never comes). What to run next is derived from the
// session file after each stored trial (onTrialStored), so a closed window or a crash resumes
// where it stopped: opening the window on the same trial continues its newest plan. Cancel stops
// queuing; the trial running finishes.
#pragma once

#include <cstdint>
#include <functional>

#include <QDialog>

#include "core/investigate/investigation.h"

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

  InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, QWidget* parent = nullptr);

  // The budget fields' values (trials and minutes; 0: no limit) and the schedule's repeats.
  void setBudget(const investigate::Budget& budget);
  investigate::Budget budget() const;
  // Plans (or finds the newest plan of the trial) and shows it; runs nothing. False with
  // errorText() when the trial cannot be investigated.
  bool prepare();
  // Start: prepares when not yet done, then queues the first missing trial within the budget.
  bool start();
  bool isRunning() const { return m_running; }
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

 private:
  int refresh();  // returns the plan's finished trials
  void launchNext();
  void finish(const char* state);

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
};

}  // namespace tunebench::ui
