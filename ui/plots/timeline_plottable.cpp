#include "ui/plots/timeline_plottable.h"

#include <algorithm>

#include "ui/plots/phase_style.h"
#include "ui/plots/timeline_data.h"

namespace tunebench::ui {

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineData* data)
    : QCPAbstractPlottable(keyAxis, valueAxis), m_data(data) {
  setSelectable(QCP::stNone);  // hover shows details; selection would only add noise
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const { return -1; }

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const {
  foundRange = m_data->barCount() > 0;
  return QCPRange(0.0, std::max(1e-3, m_data->latest_s()));
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
  foundRange = m_data->ranks() > 0;
  return QCPRange(-0.5, m_data->rows().count() - 0.5);
}

void TimelinePlottable::draw(QCPPainter* painter) {
  QCPAxis* key = keyAxis();
  QCPAxis* value = valueAxis();
  if (!key || !value) return;
  const QCPRange range = key->range();
  painter->setPen(Qt::NoPen);
  painter->setRenderHint(QPainter::Antialiasing, false);
  m_lastDrawn = 0;
  const int rows = m_data->rows().count();
  for (int r = 0; r < rows; ++r) {
    const double y0 = value->coordToPixel(r - TimelineRows::kBarHalfHeight);
    const double y1 = value->coordToPixel(r + TimelineRows::kBarHalfHeight);
    const double top = std::min(y0, y1), height = std::abs(y1 - y0);
    const auto& bars = m_data->row(r);
    const auto [first, last] = m_data->visible(r, range.lower, range.upper);
    double paintedUpTo = -1e300;
    for (size_t i = first; i < last; ++i) {
      const TimelineBar& b = bars[i];
      double x0 = key->coordToPixel(b.start_s);
      double x1 = key->coordToPixel(b.end_s);
      if (x1 - x0 < 1.0) {
        if (x0 < paintedUpTo) continue;  // sub-pixel bar on a painted pixel: invisible anyway
        x1 = x0 + 1.0;
      }
      painter->fillRect(QRectF(x0, top, x1 - x0, height), phase_color(b.phase));
      paintedUpTo = x1;
      ++m_lastDrawn;
    }
  }
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
  painter->fillRect(rect, phase_color(protocol::Phase::Forward));
}

}  // namespace tunebench::ui
