// ComparisonWindow: two or more trials side by side, from their event logs (live runs of this
// session or trials loaded from the store: the caller gets the TrialLogs, this window only
// analyses). Top: the step-time-vs-throughput sentences, prominently, because a slower step can
// be more throughput. Tab "Comparison": the configuration diff, the key metrics with spread,
// deltas and ratios (GPU utilisation and scaling efficiency included), the phase breakdown as
// stacked bars, and one representative step of each trial on one time axis. Tab "Diagnosis":
// DiagnosisView. Tab "Curves": every trial's step time and loss per step on shared axes. Tab
// "Sweep" (setSweepKeys): the sweep table and a metric against the swept knob.
#pragma once

#include <vector>

#include <QStringList>
#include <QWidget>

#include "core/analysis/report.h"
#include "core/protocol/trial_log.h"

class QComboBox;
class QSplitter;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableView;

namespace tunebench::ui {

class BreakdownPlot;
class CurvesPlot;
class ConfigDiffModel;
class DiagnosisView;
class MetricsModel;
class StepComparePlot;
class SweepPlot;
class SweepTableModel;

class ComparisonWindow : public QWidget {
  Q_OBJECT
 public:
  explicit ComparisonWindow(QWidget* parent = nullptr);
  ~ComparisonWindow() override;

  // `names[i]` names logs[i] (empty: the config's name). Repeats of one configuration are pooled.
  void setTrials(std::vector<protocol::TrialLog> logs, const QStringList& names = {});
  // Shows the Sweep tab: the compared trials as a sweep over these knobs.
  void setSweepKeys(const std::vector<std::string>& keys);

  const analysis::Report& report() const { return m_report; }
  QStringList trialNames() const { return m_names; }  // per compared (pooled) trial
  ConfigDiffModel* configDiffModel() const { return m_diffModel; }
  MetricsModel* metricsModel() const { return m_metricsModel; }
  SweepTableModel* sweepModel() const { return m_sweepModel; }
  BreakdownPlot* breakdownPlot() const { return m_breakdown; }
  StepComparePlot* stepPlot() const { return m_steps; }
  SweepPlot* sweepPlot() const { return m_sweepPlot; }
  // Tab "Curves": step time and loss of every compared log per step, overlaid.
  CurvesPlot* curvesPlot() const { return m_curves; }
  DiagnosisView* diagnosisView() const { return m_diagnosis; }
  QTabWidget* tabs() const { return m_tabs; }
  QString throughputText() const;
  // Replots every plot now (screenshots and tests grab the widgets).
  void replotNow();
  // Enables "Export report…" (the compared trials are stored in the session: the report is made
  // from the file and carries them).
  void setReportable(bool reportable);

 signals:
  // A suggestion's button was clicked: queue this trial.
  void followUpRequested(const tunebench::config::TrialConfig& config, const QString& suggestion);
  // "Export report…" was clicked: the owner asks for a path and exports the compared trials.
  void exportReportRequested();

 protected:
  void changeEvent(QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void styleThroughput();
  void fitTables();
  QWidget* buildComparisonTab();
  QWidget* buildSweepTab();
  void updateSweepPlot();

  std::vector<protocol::TrialLog> m_logs;
  analysis::Report m_report;
  QStringList m_names;
  std::vector<std::string> m_sweepKeys;

  QLabel* m_title = nullptr;
  QPushButton* m_exportReport = nullptr;
  QLabel* m_throughput = nullptr;
  QTabWidget* m_tabs = nullptr;
  ConfigDiffModel* m_diffModel = nullptr;
  MetricsModel* m_metricsModel = nullptr;
  SweepTableModel* m_sweepModel = nullptr;
  QTableView* m_diffView = nullptr;
  QTableView* m_metricsView = nullptr;
  QSplitter* m_split = nullptr;
  BreakdownPlot* m_breakdown = nullptr;
  StepComparePlot* m_steps = nullptr;
  DiagnosisView* m_diagnosis = nullptr;
  CurvesPlot* m_curves = nullptr;
  QWidget* m_sweepTab = nullptr;
  QComboBox* m_sweepMetric = nullptr;
  SweepPlot* m_sweepPlot = nullptr;
};

}  // namespace tunebench::ui
