#include "ui/plots/phase_legend_item.h"

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

// QCustomPlot clips each item to its outer rectangle moved up one pixel, and an item's rectangle is
// exactly the font's height: the margins keep the descenders ("all-gather") inside that clip.
PhaseLegendItem::PhaseLegendItem(QCPLegend* legend, protocol::Phase phase, bool on_gpu)
    : QCPAbstractLegendItem(legend), m_phase(phase), m_text(phase_name(phase, on_gpu)) {
  setMargins(QMargins(0, 1, 0, 2));
}

QRectF PhaseLegendItem::textRect() const {
  const QSize icon = mParentLegend->iconSize();
  return QRectF(mRect.x() + icon.width() + mParentLegend->iconTextPadding(), mRect.y(),
                mRect.width() - icon.width() - mParentLegend->iconTextPadding(),
                qMax<double>(icon.height(), mRect.height()));
}

void PhaseLegendItem::draw(QCPPainter* painter) {
  const QSize icon = mParentLegend->iconSize();
  const QRectF iconRect(mRect.topLeft(), icon);
  painter->setPen(QPen(phase_color(m_phase).darker(130)));
  painter->setBrush(phase_color(m_phase));
  painter->drawRect(iconRect.adjusted(0, 1, -1, -1));
  if (protocol::is_gpu_idle(m_phase)) painter->fillRect(iconRect.adjusted(1, 2, -1, -1), phase_brush(m_phase));
  painter->setFont(mFont);
  painter->setPen(QPen(mTextColor));
  painter->drawText(textRect(), Qt::AlignLeft | Qt::AlignVCenter, m_text);
}

QSize PhaseLegendItem::minimumOuterSizeHint() const {
  const QFontMetrics metrics(mFont);
  const QSize icon = mParentLegend->iconSize();
  const int width = icon.width() + mParentLegend->iconTextPadding() + metrics.horizontalAdvance(m_text);
  const int height = qMax(icon.height(), metrics.height());
  return QSize(width + mMargins.left() + mMargins.right(), height + mMargins.top() + mMargins.bottom());
}

}  // namespace tunebench::ui
