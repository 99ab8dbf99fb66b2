#include "ui/plots/timeline_plottable.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "ui/plots/phase_style.h"
#include "ui/plots/timeline_data.h"
#include "ui/plots/timeline_layout.h"

namespace tunebench::ui {

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineData* data,
                                     const TimelineLayout* layout, const std::vector<std::vector<char>>* matches)
    : QCPAbstractPlottable(keyAxis, valueAxis), m_data(data), m_layout(layout), m_matches(matches) {
  setSelectable(QCP::stNone);  // hover shows details; selection would only add noise
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const { return -1; }

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const {
  foundRange = m_data->barCount() > 0;
  return QCPRange(m_data->earliest_s(), std::max(m_data->earliest_s() + 1e-3, m_data->latest_s()));
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
  foundRange = m_layout->count() > 0;
  return QCPRange(-0.5, m_layout->count() - 0.5);
}

void TimelinePlottable::draw(QCPPainter* painter) {
  QCPAxis* key = keyAxis();
  QCPAxis* value = valueAxis();
  if (!key || !value) return;
  painter->setPen(Qt::NoPen);
  painter->setRenderHint(QPainter::Antialiasing, false);
  m_lastDrawn = 0;
  const QCPRange range = key->range();
  const protocol::Lane lanes[] = {protocol::Lane::Host, protocol::Lane::Compute, protocol::Lane::Comm};
  for (int s = 0; s < m_layout->count(); ++s) {
    const TimelineSlot& slot = m_layout->slot(s);
    for (protocol::Lane lane : lanes) {
      if (slot.lane && *slot.lane != lane) continue;
      const auto [lo, hi] = m_layout->band(s, lane);
      const double y0 = value->coordToPixel(lo), y1 = value->coordToPixel(hi);
      drawRow(painter, TimelineRows::row(slot.rank, lane), std::min(y0, y1), std::max(1.0, std::abs(y1 - y0)), range);
    }
  }
}

void TimelinePlottable::drawRow(QCPPainter* painter, int dataRow, double top, double height, const QCPRange& range) {
  QCPAxis* key = keyAxis();
  const auto& bars = m_data->row(dataRow);
  const bool searching = m_matches && !m_matches->empty();
  const std::vector<char>* match =
      searching && size_t(dataRow) < m_matches->size() ? &(*m_matches)[size_t(dataRow)] : nullptr;
  const auto [first, last] = m_data->visible(dataRow, range.lower, range.upper);
  double paintedUpTo = -1e300;
  auto paint = [&](double x0, double x1, protocol::Phase phase, bool hit) {
    QColor color = phase_color(phase);
    if (searching && !hit) color.setAlpha(45);
    const QRectF rect(x0, top, x1 - x0, height);
    painter->fillRect(rect, color);
    if (protocol::is_gpu_idle(phase) && x1 - x0 >= 3.0) painter->fillRect(rect, phase_brush(phase));
    paintedUpTo = x1;
    ++m_lastDrawn;
  };
  // Bars narrower than a pixel share their pixel column: it takes the phase that covers most of
  // it, so a kernel-sampled forward of thousands of kernels with launch gaps of a few microseconds
  // between them reads as forward, not as the gaps (a search match still wins its pixel).
  constexpr size_t kPhases = size_t(protocol::Phase::SyncWait) + 1;
  std::array<double, kPhases> cover{};
  double column = -1e300;
  bool columnUsed = false, columnHit = false;
  protocol::Phase hitPhase = protocol::Phase::Other;
  auto flush = [&] {
    if (!columnUsed) return;
    columnUsed = false;
    if (column < paintedUpTo - 0.5 && !columnHit) return;  // under a wider bar painted there
    const size_t best = size_t(std::max_element(cover.begin(), cover.end()) - cover.begin());
    paint(column, column + 1.0, columnHit ? hitPhase : protocol::Phase(best), columnHit);
  };
  for (size_t i = first; i < last; ++i) {
    const TimelineBar& b = bars[i];
    const double x0 = key->coordToPixel(b.start_s);
    const double x1 = key->coordToPixel(b.end_s);
    const bool hit = match && i < match->size() && (*match)[i];
    if (x1 - x0 >= 1.0) {
      flush();
      paint(x0, x1, b.phase, hit);
      continue;
    }
    const double px = std::floor(x0);
    if (!columnUsed || px != column) {
      flush();
      column = px;
      columnUsed = true;
      columnHit = false;
      cover.fill(0.0);
    }
    cover[size_t(b.phase)] += std::max(x1 - x0, 1e-9);
    if (hit && !columnHit) {
      columnHit = true;
      hitPhase = b.phase;
    }
  }
  flush();
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
  painter->fillRect(rect, phase_color(protocol::Phase::Forward));
}

}  // namespace tunebench::ui
