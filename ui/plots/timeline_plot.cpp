#include "ui/plots/timeline_plot.h"

#include <algorithm>

#include <QToolTip>

#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/time_axis_ticker.h"
#include "ui/plots/timeline_plottable.h"

namespace tunebench::ui {

namespace {
constexpr double kDefaultSpan_s = 2.0;
constexpr double kStepsInView = 4.0;  // follow mode shows about this many steps until the user zooms
}  // namespace

TimelinePlot::TimelinePlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("timelinePlot"));
  m_bars = new TimelinePlottable(xAxis, yAxis, &m_data);
  m_bars->setName(QStringLiteral("phases"));
  xAxis->setTicker(QSharedPointer<TimeAxisTicker>::create());
  xAxis->setLabel(QStringLiteral("time since the first event"));
  yAxis->setRangeReversed(true);  // rank 0 on top
  yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  yAxis->grid()->setVisible(false);
  yAxis->setRange(-0.5, 2.5);
  xAxis->setRange(0, kDefaultSpan_s);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setMouseTracking(true);

  // Legend in its own row under the plot, so it never covers bars.
  legend->setVisible(true);
  axisRect()->insetLayout()->take(legend);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(1, 0, legendRow);
  legendRow->setMargins(QMargins(6, 0, 6, 4));
  legendRow->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  legend->clearItems();
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(int(legend_phases().size()));
  for (protocol::Phase phase : legend_phases()) legend->addItem(new PhaseLegendItem(legend, phase));
  legend->setIconSize(12, 10);
  applyPalette();
  updateRowLabels();
}

void TimelinePlot::addEvents(const EventBatch& batch) {
  m_data.add(batch);
  markDirty();
}

void TimelinePlot::clear() {
  m_data.clear();
  m_userZoomed = false;
  xAxis->setRange(0, kDefaultSpan_s);
  updateRowLabels();
  markDirty();
}

int TimelinePlot::lastDrawnRects() const { return m_bars->lastDrawnRects(); }

void TimelinePlot::updateRowLabels() {
  const int ranks = std::max(1, m_data.ranks());
  if (ranks == m_labelledRanks) return;
  m_labelledRanks = ranks;
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(yAxis->ticker());
  ticker->clear();
  const TimelineRows rows{ranks};
  for (int r = 0; r < rows.count(); ++r)
    ticker->addTick(r, QStringLiteral("rank %1 %2").arg(TimelineRows::rankOf(r)).arg(lane_name(TimelineRows::laneOf(r))));
  yAxis->setRange(-0.5, rows.count() - 0.5);
}

void TimelinePlot::beforeReplot() {
  updateRowLabels();
  if (!m_follow || m_data.barCount() == 0) return;
  TimelineGeometry g = geometry();
  if (!m_userZoomed && m_data.lastStepDuration_s() > 0) {
    const double span = std::clamp(m_data.lastStepDuration_s() * kStepsInView, 1e-3, 600.0);
    g.t0_s = g.t1_s - span;
  }
  setGeometry(g.following(m_data.latest_s()));
}

TimelineGeometry TimelinePlot::geometry() const {
  TimelineGeometry g;
  g.t0_s = xAxis->range().lower;
  g.t1_s = xAxis->range().upper;
  g.left_px = axisRect()->left();
  g.width_px = std::max(1, axisRect()->width());
  return g;
}

void TimelinePlot::setGeometry(const TimelineGeometry& g) { xAxis->setRange(g.t0_s, g.t1_s); }

void TimelinePlot::setFollowLatest(bool follow) {
  if (m_follow == follow) return;
  m_follow = follow;
  emit followLatestChanged(follow);
  markDirty();
}

void TimelinePlot::zoomBy(double factor) {
  const TimelineGeometry g = geometry();
  setGeometry(g.zoomed(factor, (g.t0_s + g.t1_s) / 2));
  m_userZoomed = true;
  markDirty();
}

std::optional<TimelineHit> TimelinePlot::hitAt(const QPointF& pos) const {
  if (!axisRect()->rect().contains(pos.toPoint())) return std::nullopt;
  const auto row = m_data.rows().rowAt(yAxis->pixelToCoord(pos.y()));
  if (!row) return std::nullopt;
  const TimelineGeometry g = geometry();
  return m_data.hit(*row, g.toTime(pos.x()), 2.0 / g.pixelsPerSecond());  // 2 px of slack
}

QString TimelinePlot::tooltipAt(const QPointF& pos) const {
  const auto hit = hitAt(pos);
  return hit ? describe_hit(*hit) : QString();
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event) {
  LivePlot::mouseMoveEvent(event);
  if (event->buttons() != Qt::NoButton) return;
  const QString text = tooltipAt(event->position());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TimelinePlot::mousePressEvent(QMouseEvent* event) {
  // Dragging means the user wants to look at something: stop following.
  if (event->button() == Qt::LeftButton && axisRect()->rect().contains(event->pos())) setFollowLatest(false);
  LivePlot::mousePressEvent(event);
}

void TimelinePlot::wheelEvent(QWheelEvent* event) {
  m_userZoomed = true;
  LivePlot::wheelEvent(event);
}

}  // namespace tunebench::ui
