#include "ui/plots/live_plot.h"

#include <QEvent>
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

void LivePlot::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QCustomPlot::changeEvent(event);
}

}  // namespace tunebench::ui
