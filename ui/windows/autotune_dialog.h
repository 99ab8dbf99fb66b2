// AutotuneDialog: "Find the fastest…" (core/investigate/tune_session.h) from the form's trial:
// the search space around it, a budget of minutes of trial time, tokens/s in total or per GPU, and
// optionally the cheapest in energy within a margin of the fastest (GPU searches).
// Like InvestigateWindow it is run by PlanRun (plan_run.h, the plan driver's window adapter): each
// trial the search asks for goes to the launcher through AnalysisController's hooks (tagged with the
// plan), and the next one is derived from the session after each stored trial, so a closed dialog
// resumes the same search (same spec) when started again. Cancel stops the running trial; the
// report then counts what ran and names the best so far. Shows the ranked trials, the best
// configuration with its worker command line and what limited it, and saves the best as a config
// JSON.
//
// Every read and write of the session (opening the search scores its whole space: seconds; the
// report reads every measured trial) runs as a BackgroundJob (plan_session.h); a failure is shown
// in the status line (and failed()), never thrown into a slot.
#pragma once

#include <functional>
#include <optional>

#include <QDialog>

#include "ui/windows/plan_run.h"
#include "ui/windows/plan_session.h"

#include "core/investigate/tune_session.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::ui {

class AutotuneDialog : public QDialog {
  Q_OBJECT
 public:
  AutotuneDialog(const config::TrialConfig& base, const QString& sessionPath, PlanRun::Hooks hooks,
                 BackgroundJobs* jobs, QWidget* parent = nullptr);

  // The spec of what the controls say now (space from the base config, budget, objective).
  investigate::TuneSpec spec() const;
  void setBudgetMinutes(double minutes);
  void setSteps(int shortSteps, int longSteps);
  void setPerGpu(bool perGpu);
  // The second objective: of the finalists within `percent` % of the fastest, the most tokens per
  // joule (0: the fastest; GPU searches only: energy is NVML's).
  void setCheapestWithin(double percent);
  // The memory of the GPU the search runs on: points predicted not to fit are pruned, not run (the
  // command line's --device-memory-gib). 0: not checked.
  void setDeviceMemory(qint64 bytes) { m_deviceMemory = bytes; }
  // Stores (or resumes) the search and queues its first missing trial, in the background; false
  // when a step of the search is still in flight. A failure: errorText() and failed().
  bool start();
  bool isRunning() const { return m_run->isActive(); }
  PlanRun* run() const { return m_run; }
  // A session read or write of this dialog is in flight.
  bool isBusy() const { return m_plan.isBusy(); }
  qint64 planId() const { return m_planId; }
  QString errorText() const { return m_error; }
  QString reportText() const;
  // Writes the best configuration of the report shown (config JSON for tunebench-worker
  // --config); false when there is none or the file cannot be written.
  bool saveBest(const QString& path);
  QPushButton* startButton() const { return m_start; }
  QPushButton* cancelButton() const { return m_cancel; }

 public slots:
  // A trial of the window ended (any trial): the search's own moves it on (PlanRun).
  void trialEnded(const tunebench::ui::TrialOutcome& outcome);
  // Stops the search's running trial and pauses the search.
  void cancel();

 signals:
  void searchFinished(qint64 planId);
  void failed(const QString& message);

 private:
  void refreshReport();
  void showReport(const investigate::TuneReport& report);
  void fail(const QString& message);

  PlanJobs m_plan;
  PlanRun* m_run = nullptr;
  std::optional<investigate::TuneReport> m_shown;  // the report shown
  config::TrialConfig m_base;
  QString m_path;
  qint64 m_planId = 0;
  qint64 m_deviceMemory = 0;
  QString m_error;
  QDoubleSpinBox* m_budget = nullptr;
  QSpinBox* m_short = nullptr;
  QSpinBox* m_long = nullptr;
  QCheckBox* m_perGpu = nullptr;
  QDoubleSpinBox* m_cheapest = nullptr;
  QLabel* m_status = nullptr;
  QPlainTextEdit* m_report = nullptr;
  QPushButton* m_start = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_save = nullptr;
};

}  // namespace tunebench::ui
