#include "ui/plots/timeline_overview.h"

#include <algorithm>

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include "ui/plots/bar_pixels.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/timeline_data.h"
#include "ui/plots/timeline_layout.h"

namespace tunebench::ui {

TimelineOverview::TimelineOverview(const TimelineData* data, const TimelineLayout* layout, QWidget* parent)
    : QWidget(parent), m_data(data), m_layout(layout) {
  setObjectName(QStringLiteral("timelineOverview"));
  setMinimumHeight(26);
  setMaximumHeight(40);
  setMouseTracking(false);
  setToolTip(QStringLiteral("The whole run. Click or drag to move the timeline there; the wheel zooms it."));
}

double TimelineOverview::start_s() const { return m_data->earliest_s(); }
double TimelineOverview::end_s() const { return std::max(m_data->latest_s(), start_s() + 1e-3); }

double TimelineOverview::timeAt(double x) const {
  return start_s() + (x - 1) / std::max(1, width() - 2) * (end_s() - start_s());
}
double TimelineOverview::xAt(double t_s) const {
  return 1 + (t_s - start_s()) / (end_s() - start_s()) * std::max(1, width() - 2);
}

void TimelineOverview::setView(double t0_s, double t1_s) {
  if (t0_s == m_view0 && t1_s == m_view1) return;
  m_view0 = t0_s;
  m_view1 = t1_s;
  update();  // Qt coalesces repaints
}

void TimelineOverview::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  m_drawn = 0;
  if (m_data->barCount() > 0) {
    // Compute and comm lanes of each rank shown: two bands of the strip's height per rank.
    std::vector<int> rows;
    for (int r = 0; r < m_data->ranks(); ++r)
      if (!m_layout->isHidden(r))
        for (protocol::Lane lane : {protocol::Lane::Compute, protocol::Lane::Comm})
          rows.push_back(TimelineRows::row(r, lane));
    const double band = double(height() - 2) / std::max<size_t>(1, rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& bars = m_data->row(rows[i]);
      const double top = 1 + i * band, h = std::max(1.0, band - (band > 3 ? 1 : 0));
      paint_bar_row(
          bars, 0, bars.size(), [this](double t) { return xAt(t); }, [](size_t) { return false; },
          [&](const BarRect& r) {
            p.fillRect(QRectF(r.x0, top, r.x1 - r.x0, h), phase_color(r.phase));
            ++m_drawn;
          });
    }
    // The frame: what the timeline shows; the rest is dimmed.
    const double a = std::clamp(xAt(m_view0), 0.0, double(width())), b = std::clamp(xAt(m_view1), 0.0, double(width()));
    QColor dim = palette().color(QPalette::Window);
    dim.setAlpha(150);
    p.fillRect(QRectF(0, 0, a, height()), dim);
    p.fillRect(QRectF(b, 0, width() - b, height()), dim);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(a, 1, std::max(2.0, b - a), height() - 2));
  }
  QColor frame = palette().color(QPalette::WindowText);
  frame.setAlpha(80);
  p.setPen(frame);
  p.drawRect(rect().adjusted(0, 0, -1, -1));
}

void TimelineOverview::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && m_data->barCount()) emit centreRequested(timeAt(event->position().x()));
}

void TimelineOverview::mouseMoveEvent(QMouseEvent* event) {
  if ((event->buttons() & Qt::LeftButton) && m_data->barCount()) emit centreRequested(timeAt(event->position().x()));
}

void TimelineOverview::wheelEvent(QWheelEvent* event) {
  if (!m_data->barCount()) return;
  emit zoomRequested(event->angleDelta().y() > 0 ? 0.8 : 1.25, timeAt(event->position().x()));
}

}  // namespace tunebench::ui
