#include "ui/plots/live_plot.h"

#include <algorithm>

#include <QEvent>
#include <QFontMetrics>
#include <QTimer>

namespace tunebench::ui {

LivePlot::LivePlot(QWidget* parent) : QCustomPlot(parent), m_timer(new QTimer(this)) {
  m_timer->setSingleShot(true);
  m_timer->setInterval(1000 / kRefreshHz);
  connect(m_timer, &QTimer::timeout, this, &LivePlot::replotIfDirty);
  setNoAntialiasingOnDrag(true);
  setMinimumSize(200, 120);
}

void LivePlot::markDirty() {
  m_dirty = true;
  if (!m_timer->isActive()) m_timer->start();
}

void LivePlot::replotIfDirty() {
  if (!m_dirty) return;
  m_dirty = false;
  fitTickCounts();
  beforeReplot();
  replot(QCustomPlot::rpQueuedRefresh);
  ++m_replots;
}

void LivePlot::styleAxisRect(QCPAxisRect* rect) {
  const QPalette pal = palette();
  const QColor text = pal.color(QPalette::WindowText);
  QColor grid = text;
  grid.setAlpha(40);
  for (QCPAxis* axis : rect->axes()) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
  }
}

void LivePlot::applyPalette() {
  setBackground(palette().color(QPalette::Base));
  for (QCPAxisRect* rect : axisRects()) styleAxisRect(rect);
  if (legend) {
    QColor fill = palette().color(QPalette::Base);
    fill.setAlpha(220);  // a legend inside an axis rect must not hide the data completely
    legend->setBrush(fill);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(palette().color(QPalette::WindowText));
  }
  markDirty();
}

void LivePlot::setAxisTitle(QCPAxis* axis, const QString& full, const QString& brief) {
  m_titles[axis] = {full, brief};
  axis->setLabel(full);
  markDirty();
}

void LivePlot::fitTickCounts() {
  // About one label per 110 px across and per 34 px down: wide "1.250 s" labels and short
  // telemetry panels both stay legible. Text tickers (named rows, bars) place their own ticks.
  for (QCPAxisRect* rect : axisRects())
    for (QCPAxis* axis : rect->axes()) {
      const bool horizontal = axis->orientation() == Qt::Horizontal;
      const int length = horizontal ? rect->width() : rect->height();
      if (!horizontal && m_titles.contains(axis)) {
        const auto& [full, brief] = m_titles[axis];
        axis->setLabel(QFontMetrics(axis->labelFont()).horizontalAdvance(full) <= length + 8 ? full : brief);
      }
      QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
      if (!ticker || ticker.dynamicCast<QCPAxisTickerText>()) continue;
      // A panel lower than two lines of labels shows none rather than a pile of them.
      if (!horizontal) axis->setTickLabels(length >= 2.2 * QFontMetrics(axis->tickLabelFont()).height());
      ticker->setTickCount(std::clamp(length / (horizontal ? 110 : 34), 1, horizontal ? 8 : 6));
    }
}

void LivePlot::resizeEvent(QResizeEvent* event) {
  QCustomPlot::resizeEvent(event);
  markDirty();  // the tick counts depend on the size
}

void LivePlot::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QCustomPlot::changeEvent(event);
}

}  // namespace tunebench::ui
