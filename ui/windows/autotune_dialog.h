// AutotuneDialog: "Find the fastest…" (core/investigate/tune_session.h) from the form's trial:
// the search space around it, a budget of minutes of trial time, tokens/s in total or per GPU.
// Like InvestigateWindow it starts no trial itself: each trial the search asks for is handed to
// `launch` (the main window's TrialLauncher, tagged with the plan), and the next one is derived
// from the session after each stored trial, so a closed dialog resumes the same search (same spec)
// when started again. Shows the ranked trials, the best configuration with its worker command line
// and what limited it, and saves the best as a config JSON.
#pragma once

#include <functional>

#include <QDialog>

#include "core/investigate/tune_session.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace tunebench::ui {

class AutotuneDialog : public QDialog {
  Q_OBJECT
 public:
  using Launch = std::function<void(const investigate::TrialRequest&)>;

  AutotuneDialog(const config::TrialConfig& base, const QString& sessionPath, Launch launch,
                 QWidget* parent = nullptr);

  // The spec of what the controls say now (space from the base config, budget, objective).
  investigate::TuneSpec spec() const;
  void setBudgetMinutes(double minutes);
  void setSteps(int shortSteps, int longSteps);
  void setPerGpu(bool perGpu);
  // Stores (or resumes) the search and queues its first missing trial; false + errorText().
  bool start();
  bool isRunning() const { return m_running; }
  qint64 planId() const { return m_planId; }
  QString errorText() const { return m_error; }
  QString reportText() const;
  // Writes the best configuration (config JSON for tunebench-worker --config); false when none.
  bool saveBest(const QString& path);
  QPushButton* startButton() const { return m_start; }
  QPushButton* cancelButton() const { return m_cancel; }

 public slots:
  void onTrialStored();
  void cancel();
  // The trial handed to `launch` will not run (refused, or its preview cancelled): pause, say why.
  void launchRefused(const QString& reason);

 signals:
  void searchFinished(qint64 planId);

 private:
  int storedCount();
  void launchNext();
  void showReport();

  config::TrialConfig m_base;
  QString m_path;
  Launch m_launch;
  qint64 m_planId = 0;
  bool m_running = false;
  int m_awaitingAfter = -1;
  QString m_error;
  QDoubleSpinBox* m_budget = nullptr;
  QSpinBox* m_short = nullptr;
  QSpinBox* m_long = nullptr;
  QCheckBox* m_perGpu = nullptr;
  QLabel* m_status = nullptr;
  QPlainTextEdit* m_report = nullptr;
  QPushButton* m_start = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_save = nullptr;
};

}  // namespace tunebench::ui
