// LiveView: the centre of the window: one trial, live or stored. The phase timeline on top with
// its tools (find a phase or collective, ranks shown and folded, fit, zoom, follow latest), the
// overview strip of the whole run under it, the summary of a selected span (Shift+drag), and
// step time / throughput, device telemetry and memory through a sampled step below.
#pragma once

#include <optional>

#include <QList>
#include <QWidget>

#include "ui/runner/runner_types.h"

class QAction;
class QCheckBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTableView;
class QToolButton;

namespace tunebench::ui {

class RangeSummaryModel;
class StepTimePlot;
class TelemetryPlot;
class TimelineOverview;
class TimelinePlot;
class HardwareStrip;
class MemoryTimelinePlot;
struct TrialViewData;

class LiveView : public QWidget {
  Q_OBJECT
 public:
  explicit LiveView(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear(const QString& title);
  // Shows a trial prepared off the GUI thread: its whole run in view, or following the latest
  // steps when it is the running trial.
  void showTrial(TrialViewData data, bool live);
  void setProgress(const TrialProgress& progress);
  // Replaces the progress with how the trial ended ("failed at step 7 of 20: ...").
  void setOutcome(const TrialOutcome& outcome);
  // Replots every plot that has new data now (screenshots and tests grab the widgets).
  void replotNow();
  // The empty telemetry plot's labels before any sample: GPU or CPU machine.
  void setMachineHasGpu(bool gpu);

  TimelinePlot* timeline() const { return m_timeline; }
  TimelineOverview* overview() const { return m_overview; }
  StepTimePlot* stepTime() const { return m_stepTime; }
  TelemetryPlot* telemetry() const { return m_telemetry; }
  HardwareStrip* hardware() const { return m_hardware; }
  // Memory through the latest memory-sampled step of the lowest rank shown (rank 0 by default).
  MemoryTimelinePlot* memoryTimeline() const { return m_memory; }
  RangeSummaryModel* rangeSummary() const { return m_summaryModel; }
  QWidget* rangeSummaryPanel() const { return m_summaryPanel; }
  QLineEdit* searchField() const { return m_search; }
  QLineEdit* rankFilterField() const { return m_rankFilter; }
  QCheckBox* followBox() const { return m_follow; }
  QString title() const;
  QString progressText() const;
  // Follow, zoom, fit, find and fold actions with their shortcuts (the window's View menu).
  QList<QAction*> timelineActions() const { return m_actions; }

 private:
  void createTools(QWidget* bar);
  void updateSummary();
  void updateSearchLabel(int matches, int current);
  void applyRankFilter();
  void keepTimelineReadable();
  void fitPlotsWidths();

  TimelinePlot* m_timeline;
  TimelineOverview* m_overview;
  StepTimePlot* m_stepTime;
  TelemetryPlot* m_telemetry;
  HardwareStrip* m_hardware = nullptr;
  MemoryTimelinePlot* m_memory = nullptr;
  RangeSummaryModel* m_summaryModel;
  QWidget* m_summaryPanel = nullptr;
  QSplitter* m_split = nullptr;
  QSplitter* m_plots = nullptr;            // step time, telemetry, memory through a sampled step
  std::optional<bool> m_memoryPlotting;    // the widths were last fitted to a memory plot with a step
  QWidget* m_timelineBox = nullptr;  // the timeline and its overview
  QWidget* m_plotsBox = nullptr;     // step time, telemetry and the hardware strip
  QLabel* m_summaryTitle = nullptr;
  QTableView* m_summaryView = nullptr;
  QCheckBox* m_follow = nullptr;
  QLineEdit* m_search = nullptr;
  QLabel* m_searchCount = nullptr;
  QLineEdit* m_rankFilter = nullptr;
  QToolButton* m_collapse = nullptr;
  QLabel* m_title = nullptr;
  QLabel* m_progress = nullptr;
  QList<QAction*> m_actions;
  TrialProgress m_lastProgress;
};

// "step 12 of 20 · 3.4 s elapsed · about 2.1 s left".
QString format_progress(const TrialProgress& progress);

}  // namespace tunebench::ui
