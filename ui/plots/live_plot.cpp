#include "ui/plots/live_plot.h"

#include <algorithm>

#include <QEvent>
#include <QFontMetrics>
#include <QLabel>
#include <QTimer>

namespace tunebench::ui {

LivePlot::LivePlot(QWidget* parent) : QCustomPlot(parent), m_timer(new QTimer(this)) {
  m_timer->setSingleShot(true);
  m_timer->setInterval(1000 / kRefreshHz);
  connect(m_timer, &QTimer::timeout, this, &LivePlot::replotIfDirty);
  setNoAntialiasingOnDrag(true);
  setMinimumSize(200, 120);
  // Ticks, titles, row labels and step numbers are fitted to the axis rects of the last layout.
  // When this layout resized them (a splitter, a panel shown or hidden), one more replot draws
  // with the fitted axes. Nothing is changed here: axes must not change between layout and draw
  // (QCPAxis::setTickLabels frees the labels the draw is about to use).
  connect(this, &QCustomPlot::afterLayout, this, [this] {
    if (rectSizes() != m_fittedSizes && !m_refitted) {
      m_refitted = true;  // once per change from outside: margins that move with the labels cannot loop
      m_dirty = true;
      if (!m_timer->isActive()) m_timer->start();
    }
  });
}

void LivePlot::markDirty() {
  m_dirty = true;
  m_refitted = false;
  if (!m_timer->isActive()) m_timer->start();
}

void LivePlot::replotIfDirty() {
  if (!m_dirty) return;
  m_dirty = false;
  fitTickCounts();
  fitLegendColumns();
  m_fittedSizes = rectSizes();
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

QLabel* LivePlot::addNote(const QString& objectName) {
  auto* note = new QLabel(this);
  note->setObjectName(objectName);
  note->setWordWrap(true);
  note->setAlignment(Qt::AlignCenter);
  note->setAttribute(Qt::WA_TransparentForMouseEvents);
  note->hide();
  return note;
}

QCPLayoutGrid* LivePlot::addLegendRow() {
  auto* row = new QCPLayoutGrid;
  plotLayout()->addElement(0, 0, row);
  row->setMargins(QMargins(6, 2, 6, 0));
  plotLayout()->setRowStretchFactor(0, 0.001);
  return row;
}

void LivePlot::setAxisTitle(QCPAxis* axis, const QString& full, const QString& brief) {
  m_titles[axis] = {full, brief};
  axis->setLabel(full);
  markDirty();
}

bool LivePlot::fitTickCounts() {
  // About one label per 110 px across and per 34 px down: wide "1.250 s" labels and short
  // telemetry panels both stay legible. Text tickers (named rows, bars) place their own ticks.
  bool changed = false;
  for (QCPAxisRect* rect : axisRects())
    for (QCPAxis* axis : rect->axes()) {
      const bool horizontal = axis->orientation() == Qt::Horizontal;
      const int length = horizontal ? rect->width() : rect->height();
      if (!horizontal && m_titles.contains(axis)) {
        const auto& [full, brief] = m_titles[axis];
        const QString title = QFontMetrics(axis->labelFont()).horizontalAdvance(full) <= length + 8 ? full : brief;
        changed = changed || title != axis->label();
        axis->setLabel(title);
      }
      QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
      if (!ticker || ticker.dynamicCast<QCPAxisTickerText>()) continue;
      // A panel lower than two lines of labels shows none rather than a pile of them.
      if (!horizontal) {
        const bool labels = length >= 2.2 * QFontMetrics(axis->tickLabelFont()).height();
        changed = changed || labels != axis->tickLabels();
        axis->setTickLabels(labels);
      }
      // A value axis asks for two ticks at least: with one, the ticker's step is the whole range
      // rounded up (0-799 W: 1000), and only the tick at 0 falls inside.
      const int count = std::clamp(length / (horizontal ? 110 : 34), horizontal ? 1 : 2, horizontal ? 8 : 6);
      changed = changed || count != ticker->tickCount();
      ticker->setTickCount(count);
    }
  return changed;
}

bool LivePlot::fitLegendColumns() {
  if (!legend || !legend->visible() || legend->itemCount() == 0 || !legend->layout()) return false;
  for (QCPAxisRect* rect : axisRects())
    if (legend->layout() == rect->insetLayout()) return false;  // an inset legend keeps its own shape
  for (int i = 0; i < legend->layout()->elementCount(); ++i) {
    const QCPLayoutElement* other = legend->layout()->elementAt(i);
    if (other && other != legend) return false;  // a row it shares (step time's two legends) keeps its own
  }
  int widest = 0;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = legend->item(i)) widest = std::max(widest, item->minimumOuterSizeHint().width());
  if (widest <= 0) return false;
  const QMargins row = legend->layout()->margins(), own = legend->margins();
  const int available = viewport().width() - row.left() - row.right() - own.left() - own.right();
  const int spacing = legend->columnSpacing();
  const int columns = std::clamp((available + spacing) / (widest + spacing), 1, legend->itemCount());
  if (columns == legend->wrap()) return false;
  legend->setWrap(columns);
  legend->setFillOrder(legend->fillOrder(), true);  // setWrap alone leaves the entries where they are
  return true;
}

QVector<QSize> LivePlot::rectSizes() const {
  QVector<QSize> sizes;
  for (QCPAxisRect* rect : axisRects()) sizes << rect->size();
  return sizes;
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
