// SweepDialog: choose knobs (from config::knobs()) and value lists and a repeat count; the plan
// (analysis::plan_sweep on the form's trial) is previewed as "N trials" with every invalid
// combination listed with its problem, never dropped silently. "Queue" asks for the grid to be
// queued (queueRequested); the dialog then shows the sweep's overall progress (i of N) from the
// finished trials and, when all are done, reports sweepFinished so the comparison can show it and
// offers Queue again for the next sweep. Return in a values cell only commits the cell: Queue is
// never a default button, so a sweep starts only when it is clicked, with what is entered then.
#pragma once

#include <vector>

#include <QDialog>
#include <QStringList>

#include "core/analysis/sweep.h"
#include "ui/runner/runner_types.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace tunebench::ui {

class SweepDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SweepDialog(const config::TrialConfig& base, QWidget* parent = nullptr);

  // Replaces the axes (knob key, comma-separated values), as if typed.
  void setAxes(const std::vector<analysis::SweepAxis>& axes);
  void setRepeats(int repeats);
  // The plan of what is entered now.
  analysis::SweepPlan plan() const;
  std::vector<std::string> keys() const;

  // The queued trials' ids, in order (the owner queues and tells the dialog).
  void setQueued(const QStringList& trialIds);
  // The owner could not queue the sweep (a problem, or the preview was cancelled).
  void setRefused(const QString& message);
  // A queued sweep has trials still running: Queue waits until it is done.
  bool isRunning() const { return m_running; }
  QStringList queuedIds() const { return m_ids; }
  int finishedCount() const { return int(m_done.size()); }
  QString progressText() const;
  QListWidget* invalidList() const { return m_invalid; }
  QPushButton* queueButton() const { return m_queue; }

 public slots:
  void onTrialFinished(const tunebench::ui::TrialOutcome& outcome);
  // Recomputes the preview (called on every edit).
  void updatePlan();

 signals:
  void queueRequested(const std::vector<tunebench::config::TrialConfig>& configs);
  void sweepFinished(const QStringList& trialIds, const std::vector<std::string>& keys);

 private:
  void addAxisRow(const std::string& key, const QString& values);

  config::TrialConfig m_base;
  QTableWidget* m_axes = nullptr;
  QSpinBox* m_repeats = nullptr;
  QLabel* m_summary = nullptr;
  QListWidget* m_invalid = nullptr;
  QPushButton* m_queue = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_progressLabel = nullptr;
  QStringList m_ids;
  QStringList m_done;
  std::vector<std::string> m_queuedKeys;
  bool m_running = false;
};

// "a, b ,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_values(const QString& text);

}  // namespace tunebench::ui
