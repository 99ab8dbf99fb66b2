// The phase timeline: one row per rank and lane (host, compute, comm), bars coloured by phase,
// a legend of phases, horizontal zoom (wheel) and pan (drag), a hover tooltip with phase,
// duration, bytes and bandwidth, and "follow latest", which keeps the newest step in view.
#pragma once

#include <optional>

#include "ui/plots/live_plot.h"
#include "ui/plots/timeline_data.h"

namespace tunebench::ui {

class TimelinePlottable;

class TimelinePlot : public LivePlot {
  Q_OBJECT
 public:
  explicit TimelinePlot(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear();

  const TimelineData& data() const { return m_data; }
  size_t barCount() const { return m_data.barCount(); }
  int lastDrawnRects() const;
  bool followLatest() const { return m_follow; }
  // The bar under a widget position and its tooltip text (empty when none).
  std::optional<TimelineHit> hitAt(const QPointF& pos) const;
  QString tooltipAt(const QPointF& pos) const;
  // Visible range and pixel mapping as a value type (for tests and keyboard zoom).
  TimelineGeometry geometry() const;
  void setGeometry(const TimelineGeometry& g);  // sets the visible time range only

 public slots:
  void setFollowLatest(bool follow);
  void zoomBy(double factor);  // keyboard zoom around the centre

 signals:
  void followLatestChanged(bool follow);

 protected:
  void beforeReplot() override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void updateRowLabels();

  TimelineData m_data;
  TimelinePlottable* m_bars = nullptr;
  int m_labelledRanks = -1;
  bool m_follow = true;
  bool m_userZoomed = false;  // once the user zoomed, follow keeps their span
};

}  // namespace tunebench::ui
