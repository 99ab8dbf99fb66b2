// InvestigateWindow: the plan view of "Investigate…" on a stored trial (core/investigate). It
// shows the planned variants (and the skipped ones with their reasons), the progress, a Cancel
// button, and the result as a ranked bar chart of effects (EffectChart) with the written verdict.
//
// It never starts a trial itself: each next trial of the plan is handed to `launch`, which the
// main window wires to its TrialLauncher (the one launch path) and which tags the queued trial
// with the plan. What to run next is derived from the session file after each stored trial
// (onTrialStored), so a closed window or a crash resumes where it stopped: opening the window on
// the same trial continues its newest plan. Cancel stops queuing; the trial running finishes.
#pragma once

#include <cstdint>
#include <functional>

#include <QDialog>

#include "core/investigate/investigation.h"

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

  InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, QWidget* parent = nullptr);

  void setBudget(const investigate::Budget& budget) { m_budget = budget; }
  // Plans (or resumes the newest plan of the trial) and queues the first missing trial. False
  // with errorText() when the trial cannot be investigated.
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

 public slots:
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
};

}  // namespace tunebench::ui
