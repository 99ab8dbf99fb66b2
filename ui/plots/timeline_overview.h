// TimelineOverview: a thin strip under the timeline with the whole run in it (every rank's
// compute and comm lanes squeezed to a few pixels), and a frame around the part the timeline
// shows. Clicking or dragging in the strip moves the timeline there; the wheel zooms it. It is
// Nsight Systems' and Perfetto's overview track: where am I in the run, where are the gaps.
// A plain widget painting TimelineData itself (no QCustomPlot: it has no axes to show).
#pragma once

#include <QWidget>

namespace tunebench::ui {

class TimelineData;
class TimelineLayout;

class TimelineOverview : public QWidget {
  Q_OBJECT
 public:
  TimelineOverview(const TimelineData* data, const TimelineLayout* layout, QWidget* parent = nullptr);

  // The timeline's visible span (the frame).
  void setView(double t0_s, double t1_s);
  // The run's time span drawn across the width.
  double start_s() const;
  double end_s() const;
  // Time at pixel x of this widget, and back.
  double timeAt(double x) const;
  double xAt(double t_s) const;
  int lastDrawnRects() const { return m_drawn; }
  QSize sizeHint() const override { return {400, 34}; }

 signals:
  // Centre the timeline on `t_s`, keeping its span.
  void centreRequested(double t_s);
  void zoomRequested(double factor, double anchor_s);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  const TimelineData* m_data;
  const TimelineLayout* m_layout;
  double m_view0 = 0.0, m_view1 = 0.0;
  int m_drawn = 0;
};

}  // namespace tunebench::ui
