#include "ui/plots/timeline_plottable.h"

#include <algorithm>

#include "ui/plots/bar_pixels.h"
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
  for (int s = 0; s < m_layout->count(); ++s) {
    const TimelineSlot& slot = m_layout->slot(s);
    for (protocol::Lane lane : protocol::kLanes) {
      if (slot.lane && *slot.lane != lane) continue;
      const auto [lo, hi] = m_layout->band(s, lane);
      const double y0 = value->coordToPixel(lo), y1 = value->coordToPixel(hi);
      drawRow(painter, TimelineRows::row(slot.rank, lane), std::min(y0, y1), std::max(1.0, std::abs(y1 - y0)), range);
    }
  }
}

void TimelinePlottable::drawRow(QCPPainter* painter, int dataRow, double top, double height, const QCPRange& range) {
  QCPAxis* key = keyAxis();
  const bool searching = m_matches && !m_matches->empty();
  const std::vector<char>* match =
      searching && size_t(dataRow) < m_matches->size() ? &(*m_matches)[size_t(dataRow)] : nullptr;
  const auto [first, last] = m_data->visible(dataRow, range.lower, range.upper);
  paint_bar_row(
      m_data->row(dataRow), first, last, [key](double t) { return key->coordToPixel(t); },
      [match](size_t i) { return match && i < match->size() && (*match)[i]; },
      [&](const BarRect& r) {
        QColor color = phase_color(r.phase);
        if (searching && !r.wins) color.setAlpha(45);  // a match stands out
        const QRectF rect(r.x0, top, r.x1 - r.x0, height);
        painter->fillRect(rect, color);
        if (protocol::is_gpu_idle(r.phase) && r.x1 - r.x0 >= 3.0) painter->fillRect(rect, phase_brush(r.phase));
        ++m_lastDrawn;
      });
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
  painter->fillRect(rect, phase_color(protocol::Phase::Forward));
}

}  // namespace tunebench::ui
