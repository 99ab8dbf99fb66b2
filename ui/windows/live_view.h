// LiveView: the centre of the window. The phase timeline on top with its controls (follow latest,
// zoom) and the trial's progress; step time / throughput and device telemetry below.
#pragma once

#include <QWidget>

#include "ui/runner/runner_types.h"

class QCheckBox;
class QLabel;

namespace tunebench::ui {

class StepTimePlot;
class TelemetryPlot;
class TimelinePlot;

class LiveView : public QWidget {
  Q_OBJECT
 public:
  explicit LiveView(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear(const QString& title);
  void setProgress(const TrialProgress& progress);
  // Replaces the progress with how the trial ended ("failed at step 7 of 20: ...").
  void setOutcome(const TrialOutcome& outcome);
  // Replots every plot that has new data now (screenshots and tests grab the widgets).
  void replotNow();

  TimelinePlot* timeline() const { return m_timeline; }
  StepTimePlot* stepTime() const { return m_stepTime; }
  TelemetryPlot* telemetry() const { return m_telemetry; }
  QCheckBox* followBox() const { return m_follow; }
  QString progressText() const;

 private:
  TimelinePlot* m_timeline;
  StepTimePlot* m_stepTime;
  TelemetryPlot* m_telemetry;
  QCheckBox* m_follow;
  QLabel* m_title;
  QLabel* m_progress;
  TrialProgress m_lastProgress;
};

// "step 12 of 20 · 3.4 s elapsed · about 2.1 s left".
QString format_progress(const TrialProgress& progress);

}  // namespace tunebench::ui
