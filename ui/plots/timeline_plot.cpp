#include "ui/plots/timeline_plot.h"

#include <algorithm>
#include <cmath>

#include <QToolTip>

#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/time_axis_ticker.h"
#include "ui/plots/timeline_plottable.h"

namespace tunebench::ui {

namespace {
constexpr double kDefaultSpan_s = 2.0;
constexpr double kStepsInView = 4.0;  // follow mode shows about this many steps until the user zooms
constexpr int kDragThresholdPx = 4;

// 1, 2, 5, 10, 20, 50, ...: the smallest such stride not below `at_least`.
int64_t nice_stride(double at_least) {
  int64_t stride = 1;
  for (int k = 0; double(stride) < at_least && k < 40; ++k) stride = (k % 3 == 1) ? stride * 5 / 2 : stride * 2;
  return std::max<int64_t>(1, stride);
}
}  // namespace

TimelinePlot::TimelinePlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("timelinePlot"));
  m_layout = TimelineLayout(1, {}, {});
  m_bars = new TimelinePlottable(xAxis, yAxis, &m_data, &m_layout, &m_matchFlags);
  m_bars->setName(QStringLiteral("phases"));
  xAxis->setTicker(QSharedPointer<TimeAxisTicker>::create());
  xAxis->setLabel(QStringLiteral("time since the first event"));
  // The top axis carries the step numbers at step starts; its grid lines are the step markers.
  xAxis2->setVisible(true);
  xAxis2->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  xAxis2->setLabel(QStringLiteral("step"));
  xAxis2->grid()->setVisible(true);
  xAxis2->setSubTicks(false);
  // Titles close to their tick labels: on a laptop the pixels go to the ranks' rows.
  for (QCPAxis* axis : {xAxis, xAxis2}) {
    axis->setLabelPadding(2);
    axis->setTickLabelPadding(3);
  }
  connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), xAxis2,
          qOverload<const QCPRange&>(&QCPAxis::setRange));
  connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &TimelinePlot::onRangeChanged);
  // Step numbers and row labels depend on the axis rect's size, known only after a layout:
  // LivePlot replots once more when a layout resized it (beforeReplot recomputes them).
  yAxis->setRangeReversed(true);  // rank 0 on top
  yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  yAxis->grid()->setVisible(false);
  yAxis->setRange(-0.5, 2.5);
  xAxis->setRange(0, kDefaultSpan_s);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setMouseTracking(true);

  auto spanItem = [this] {
    auto* item = new QCPItemRect(this);
    item->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    item->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    item->setClipToAxisRect(true);
    item->setSelectable(false);
    item->setVisible(false);
    return item;
  };
  m_selection = spanItem();
  m_dragBand = spanItem();
  m_matchMark = new QCPItemRect(this);
  m_matchMark->setSelectable(false);
  m_matchMark->setVisible(false);
  m_matchMark->setBrush(Qt::NoBrush);

  // Legend in its own row under the plot, so it never covers bars. It lists the phases drawn
  // (updateLegend): a CPU trial has no GPU-idle gaps, a single GPU no collectives, and a legend of
  // every phase took four rows of a laptop's timeline.
  legend->setVisible(true);
  axisRect()->insetLayout()->take(legend);
  m_legendRow = new QCPLayoutGrid;
  m_legendRow->setMargins(QMargins(6, 0, 6, 2));
  m_legendRow->addElement(0, 0, legend);
  legend->clearItems();  // no phase drawn yet: the row stays out of the layout (placeLegendRow)
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(6);
  legend->setIconSize(12, 10);
  legend->setMargins(QMargins(4, 1, 4, 1));  // a strip of its own needs no padding over the rows
  applyPalette();
  updateRowLabels();
}

void TimelinePlot::applyPalette() {
  LivePlot::applyPalette();
  QColor band = palette().color(QPalette::Highlight);
  band.setAlpha(50);
  m_selection->setBrush(band);
  m_selection->setPen(QPen(palette().color(QPalette::Highlight), 1));
  band.setAlpha(35);
  m_dragBand->setBrush(band);
  m_dragBand->setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
  m_matchMark->setPen(QPen(palette().color(QPalette::WindowText), 2));
  QColor grid = palette().color(QPalette::WindowText);
  grid.setAlpha(70);
  xAxis2->grid()->setPen(QPen(grid, 1, Qt::DotLine));
}

void TimelinePlot::addEvents(const EventBatch& batch) {
  m_data.add(batch);
  updateLegend();
  markDirty();
}

void TimelinePlot::setData(TimelineData data) {
  m_data = std::move(data);
  m_matchedBars = size_t(-1);
  rebuildLayout();
  updateLegend();
  markDirty();
}

void TimelinePlot::clear() {
  m_data.clear();
  m_userZoomed = false;
  m_found.clear();
  m_matchFlags.clear();
  m_current = -1;
  m_matchMark->setVisible(false);
  clearSelectedRange();
  m_clamping = true;
  xAxis->setRange(0, kDefaultSpan_s);
  m_clamping = false;
  rebuildLayout();
  updateLegend();
  markDirty();
}

int TimelinePlot::lastDrawnRects() const { return m_bars->lastDrawnRects(); }

void TimelinePlot::rebuildLayout() {
  m_layout = TimelineLayout(std::max(1, m_data.ranks()), m_hidden, m_collapsed);
  m_labelledSlots = -1;
  leastHeightMayHaveChanged();  // a row per rank shown
  updateRowLabels();
  emit layoutChanged();
}

void TimelinePlot::setHiddenRanks(const std::set<int>& ranks) {
  m_hidden = ranks;
  rebuildLayout();
  m_matchedBars = size_t(-1);  // the matches cover the rows shown
  markDirty();
}

void TimelinePlot::setCollapsedRanks(const std::set<int>& ranks) {
  m_collapsed = ranks;
  rebuildLayout();
  markDirty();
}

std::vector<int> TimelinePlot::shownDataRows() const {
  std::vector<int> rows;
  for (int r = 0; r < m_data.ranks(); ++r)
    if (!m_layout.isHidden(r))
      for (protocol::Lane lane : protocol::kLanes)
        rows.push_back(TimelineRows::row(r, lane));
  return rows;
}

void TimelinePlot::updateLegend() {
  if (m_data.phasesSeen() == m_legendPhases && m_data.onGpu() == m_legendOnGpu) return;
  m_legendPhases = m_data.phasesSeen();
  m_legendOnGpu = m_data.onGpu();
  legend->clearItems();
  for (protocol::Phase phase : legend_phases())
    if (size_t(phase) < m_legendPhases.size() && m_legendPhases[size_t(phase)])
      legend->addItem(new PhaseLegendItem(legend, phase, m_legendOnGpu));  // columns: fitLegendColumns
  placeLegendRow(legend->itemCount() > 0);
  leastHeightMayHaveChanged();  // the legend's rows are part of the least height
}

// An empty legend's grid reports a maximum width of its margins, and the column it shares with the
// axis rect took that: a trial with no step drew its timeline 50 px wide. The row is in the layout
// only while the legend lists something.
void TimelinePlot::placeLegendRow(bool shown) {
  if (shown == (m_legendRow->layout() != nullptr)) return;
  if (shown) {
    plotLayout()->addElement(1, 0, m_legendRow);
    plotLayout()->setRowStretchFactor(1, 0.001);
  } else {
    plotLayout()->take(m_legendRow);
    plotLayout()->simplify();
  }
}

TimelinePlot::~TimelinePlot() {
  if (m_legendRow && !m_legendRow->layout()) {
    delete m_legendRow;  // with the legend in it: QCustomPlot deletes only what its layout holds
    legend = nullptr;
  }
}

void TimelinePlot::leastHeightMayHaveChanged() {
  const int least = minimumSizeHint().height();
  if (least == m_leastHeight) return;
  m_leastHeight = least;
  updateGeometry();
  emit leastHeightChanged(least);
}

int TimelinePlot::rankRowPx() const { return QFontMetrics(yAxis->tickLabelFont()).height() + 2; }

QSize TimelinePlot::minimumSizeHint() const {
  int ranks = 0;
  for (int i = 0; i < m_layout.count(); ++i)
    ranks += !m_layout.slot(i).lane || *m_layout.slot(i).lane == protocol::Lane::Compute;
  // Before the first layout: two axes with their titles and a legend row, about this much.
  const int chrome = m_chromePx > 0 ? m_chromePx : 6 * rankRowPx();
  return {LivePlot::minimumSizeHint().width(), chrome + std::max(1, ranks) * rankRowPx()};
}

void TimelinePlot::updateRowLabels() {
  const double slotPx = m_layout.count() ? double(axisRect()->height()) / m_layout.count() : 0.0;
  if (m_layout.count() == m_labelledSlots && std::abs(slotPx - m_labelledSlotPx) < 1.0) return;
  m_labelledSlots = m_layout.count();
  m_labelledSlotPx = slotPx;
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(yAxis->ticker());
  ticker->clear();
  // Rows lower than a line of text get one short label per rank, on its compute row; when even
  // those would touch, only every k-th rank is named.
  const int lineHeight = rankRowPx();
  const bool compact = slotPx < lineHeight;
  double lastLabelled = -1e9;
  for (int i = 0; i < m_layout.count(); ++i) {
    const TimelineSlot& s = m_layout.slot(i);
    QString label;
    if (!compact)
      label = s.lane ? QStringLiteral("rank %1 %2").arg(s.rank).arg(lane_name(*s.lane))
                     : QStringLiteral("rank %1 ▸").arg(s.rank);
    else if ((!s.lane || *s.lane == protocol::Lane::Compute) && (i - lastLabelled) * slotPx >= lineHeight) {
      label = QStringLiteral("r%1").arg(s.rank);
      lastLabelled = i;
    }
    ticker->addTick(i, label);
  }
  yAxis->setRange(-0.5, std::max(1, m_layout.count()) - 0.5);
}

void TimelinePlot::updateStepTicks() {
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(xAxis2->ticker());
  ticker->clear();
  const auto& marks = m_data.stepMarks();
  if (marks.empty()) return;
  const QCPRange range = xAxis->range();
  const double width = std::max(1, axisRect()->width());
  const QFontMetrics fm(xAxis2->tickLabelFont());
  const double minGapPx = fm.horizontalAdvance(QString::number(marks.back().step)) + 14;
  const double typical = m_data.typicalStepDuration_s() > 0 ? m_data.typicalStepDuration_s() : range.size() / 10;
  const double stepPx = typical / range.size() * width;
  const int64_t stride = nice_stride(minGapPx / std::max(1e-9, stepPx));
  auto first =
      std::lower_bound(marks.begin(), marks.end(), range.lower, [](const StepMark& m, double t) { return m.t_s < t; });
  double lastPx = -1e9;
  for (auto it = first; it != marks.end() && it->t_s <= range.upper; ++it) {
    if (it->step % stride != 0) continue;
    const double px = xAxis->coordToPixel(it->t_s);
    if (px - lastPx < minGapPx) continue;
    ticker->addTick(it->t_s, QString::number(it->step));
    lastPx = px;
  }
}

void TimelinePlot::beforeReplot() {
  if (m_layout.ranks() != std::max(1, m_data.ranks())) rebuildLayout();
  if (!m_query.isEmpty() && m_matchedBars != m_data.barCount()) updateMatches();
  if (m_follow && m_data.barCount() > 0) {
    TimelineGeometry g = geometry();
    if (!m_userZoomed && m_data.typicalStepDuration_s() > 0) {
      const double span = std::clamp(m_data.typicalStepDuration_s() * kStepsInView, 1e-3, 600.0);
      g.t0_s = g.t1_s - span;
    }
    setGeometry(g.following(m_data.latest_s()));
  }
  updateStepTicks();
  // The step numbers (a first one adds a line over the rows) and the legend's entries set the axis
  // rect's height: lay out with them, so the row labels fit the rect this replot draws.
  updateLayout();
  // The axes' and the legend's height: the least height follows it.
  if (axisRect()->height() > 0 && height() > axisRect()->height()) {
    const int chrome = height() - axisRect()->height();
    if (chrome != m_chromePx) {
      m_chromePx = chrome;
      leastHeightMayHaveChanged();
    }
  }
  updateRowLabels();
}

TimelineGeometry TimelinePlot::geometry() const {
  TimelineGeometry g;
  g.t0_s = xAxis->range().lower;
  g.t1_s = xAxis->range().upper;
  g.left_px = axisRect()->left();
  g.width_px = std::max(1, axisRect()->width());
  return g;
}

void TimelinePlot::setGeometry(const TimelineGeometry& g) {
  const TimelineGeometry c = m_data.barCount() ? g.clamped(m_data.earliest_s(), m_data.latest_s()) : g;
  xAxis->setRange(c.t0_s, c.t1_s);
}

void TimelinePlot::onRangeChanged(const QCPRange& range) {
  // Wheel zoom and drag change the range directly: keep them on the data.
  if (!m_clamping && m_data.barCount()) {
    TimelineGeometry g = geometry();
    g.t0_s = range.lower;
    g.t1_s = range.upper;
    const TimelineGeometry c = g.clamped(m_data.earliest_s(), m_data.latest_s());
    if (std::abs(c.t0_s - range.lower) > 1e-12 || std::abs(c.t1_s - range.upper) > 1e-12) {
      m_clamping = true;
      xAxis->setRange(c.t0_s, c.t1_s);
      m_clamping = false;
    }
  }
  updateStepTicks();
  emit viewChanged(xAxis->range().lower, xAxis->range().upper);
}

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

void TimelinePlot::zoomToRange(double t0_s, double t1_s) {
  if (t1_s < t0_s) std::swap(t0_s, t1_s);
  setFollowLatest(false);
  TimelineGeometry g = geometry();
  g.t0_s = t0_s;
  g.t1_s = std::max(t1_s, t0_s + TimelineGeometry::kMinSpan_s);
  setGeometry(g);
  m_userZoomed = true;
  markDirty();
}

void TimelinePlot::fitToData() {
  setFollowLatest(false);
  m_userZoomed = true;
  if (m_data.barCount()) setGeometry(geometry().fitted(m_data.earliest_s(), m_data.latest_s()));
  markDirty();
}

void TimelinePlot::showSpan(QCPItemRect* item, double t0_s, double t1_s) {
  item->topLeft->setCoords(std::min(t0_s, t1_s), 0.0);
  item->bottomRight->setCoords(std::max(t0_s, t1_s), 1.0);
  item->setVisible(true);
}

void TimelinePlot::setSelectedRange(double t0_s, double t1_s) {
  if (t1_s < t0_s) std::swap(t0_s, t1_s);
  m_selected = std::make_pair(t0_s, t1_s);
  showSpan(m_selection, t0_s, t1_s);
  markDirty();
  emit rangeSelected(t0_s, t1_s);
}

void TimelinePlot::clearSelectedRange() {
  const bool had = m_selected.has_value();
  m_selected.reset();
  m_selection->setVisible(false);
  markDirty();
  if (had) emit rangeCleared();
}

void TimelinePlot::setSearch(const QString& query) {
  m_query = query.trimmed();
  m_current = -1;
  m_matchMark->setVisible(false);
  m_matchedBars = size_t(-1);
  updateMatches();
  markDirty();
}

void TimelinePlot::updateMatches() {
  m_matchedBars = m_data.barCount();
  m_matchFlags.clear();
  if (m_query.isEmpty()) {
    m_found.clear();
    emit searchChanged(0, -1);
    return;
  }
  m_found = find_bars(m_data, m_query, shownDataRows());
  m_matchFlags.assign(size_t(m_data.rows().count()), {});
  for (int row = 0; row < m_data.rows().count(); ++row) m_matchFlags[size_t(row)].assign(m_data.row(row).size(), 0);
  for (const BarRef& b : m_found) m_matchFlags[size_t(b.row)][b.index] = 1;
  if (m_current >= int(m_found.size())) m_current = -1;
  emit searchChanged(int(m_found.size()), m_current);
}

bool TimelinePlot::stepMatch(int direction) {
  if (m_found.empty()) return false;
  const int n = int(m_found.size());
  m_current = m_current < 0 ? (direction >= 0 ? 0 : n - 1) : ((m_current + direction) % n + n) % n;
  const BarRef ref = m_found[size_t(m_current)];
  const TimelineBar& bar = m_data.row(ref.row)[ref.index];
  setFollowLatest(false);
  TimelineGeometry g = geometry();
  const double duration = std::max(bar.end_s - bar.start_s, TimelineGeometry::kMinSpan_s);
  // Too small to see, or out of view: centre it, wide enough to be a few percent of the view.
  double span = g.span_s();
  if (duration * g.pixelsPerSecond() < 6) span = std::max(duration * 8, TimelineGeometry::kMinSpan_s * 10);
  const double mid = (bar.start_s + bar.end_s) / 2;
  if (span != g.span_s() || bar.start_s < g.t0_s || bar.end_s > g.t1_s) {
    g.t0_s = mid - span / 2;
    g.t1_s = mid + span / 2;
    setGeometry(g);
  }
  m_userZoomed = true;
  const int slot = m_layout.slotOf(TimelineRows::rankOf(ref.row), TimelineRows::laneOf(ref.row));
  if (slot >= 0) {
    const auto [lo, hi] = m_layout.band(slot, TimelineRows::laneOf(ref.row));
    m_matchMark->topLeft->setCoords(bar.start_s, lo - 0.05);
    m_matchMark->bottomRight->setCoords(bar.end_s, hi + 0.05);
    m_matchMark->setVisible(true);
  }
  emit searchChanged(n, m_current);
  markDirty();
  return true;
}

std::optional<TimelineHit> TimelinePlot::hitAt(const QPointF& pos) const {
  if (!axisRect()->rect().contains(pos.toPoint())) return std::nullopt;
  const double value = yAxis->pixelToCoord(pos.y());
  const auto slot = m_layout.slotAt(value);
  if (!slot) return std::nullopt;
  const auto lane = m_layout.laneAt(*slot, value);
  if (!lane) return std::nullopt;
  const TimelineGeometry g = geometry();
  return m_data.hit(TimelineRows::row(m_layout.slot(*slot).rank, *lane), g.toTime(pos.x()),
                    2.0 / g.pixelsPerSecond());  // 2 px of slack
}

QString TimelinePlot::tooltipAt(const QPointF& pos) const {
  const auto hit = hitAt(pos);
  return hit ? describe_hit(*hit) : QString();
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event) {
  if (m_drag != Drag::None) {
    showSpan(m_dragBand, m_dragFrom_s, xAxis->pixelToCoord(event->position().x()));
    replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  LivePlot::mouseMoveEvent(event);
  if (event->buttons() != Qt::NoButton) return;
  const QString text = tooltipAt(event->position());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TimelinePlot::mousePressEvent(QMouseEvent* event) {
  const bool inside = axisRect()->rect().contains(event->pos());
  if (event->button() == Qt::LeftButton && inside && (event->modifiers() & (Qt::ControlModifier | Qt::ShiftModifier))) {
    // Ctrl: box zoom; Shift: select a span. Neither pans.
    m_drag = (event->modifiers() & Qt::ControlModifier) ? Drag::Zoom : Drag::Select;
    m_dragFrom_s = xAxis->pixelToCoord(event->position().x());
    showSpan(m_dragBand, m_dragFrom_s, m_dragFrom_s);
    return;
  }
  // Dragging means the user wants to look at something: stop following.
  if (event->button() == Qt::LeftButton && inside) setFollowLatest(false);
  LivePlot::mousePressEvent(event);
}

void TimelinePlot::mouseReleaseEvent(QMouseEvent* event) {
  if (m_drag == Drag::None) {
    LivePlot::mouseReleaseEvent(event);
    return;
  }
  const Drag drag = std::exchange(m_drag, Drag::None);
  m_dragBand->setVisible(false);
  const double to_s = xAxis->pixelToCoord(event->position().x());
  const bool moved = std::abs(xAxis->coordToPixel(to_s) - xAxis->coordToPixel(m_dragFrom_s)) >= kDragThresholdPx;
  if (drag == Drag::Zoom && moved) zoomToRange(m_dragFrom_s, to_s);
  if (drag == Drag::Select) {
    if (moved)
      setSelectedRange(m_dragFrom_s, to_s);
    else
      clearSelectedRange();  // Shift+click elsewhere drops the selection
  }
  markDirty();
}

void TimelinePlot::mouseDoubleClickEvent(QMouseEvent* event) {
  // A double click on a row's label folds or unfolds that rank's lanes.
  const QRect rect = axisRect()->rect();
  if (event->pos().x() < rect.left() && event->pos().y() >= rect.top() && event->pos().y() <= rect.bottom()) {
    if (const auto slot = m_layout.slotAt(yAxis->pixelToCoord(event->position().y()))) {
      const int rank = m_layout.slot(*slot).rank;
      std::set<int> collapsed = m_collapsed;
      if (!collapsed.erase(rank)) collapsed.insert(rank);
      setCollapsedRanks(collapsed);
      return;
    }
  }
  LivePlot::mouseDoubleClickEvent(event);
}

void TimelinePlot::wheelEvent(QWheelEvent* event) {
  m_userZoomed = true;
  LivePlot::wheelEvent(event);
}

}  // namespace tunebench::ui
