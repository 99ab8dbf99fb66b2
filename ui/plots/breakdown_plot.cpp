#include "ui/plots/breakdown_plot.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/analysis/phase_style.h"
#include "ui/plots/phase_style.h"

namespace tunebench::ui {

using analysis::Part;

namespace {
constexpr int kLabelLines = 4;  // a bar's name takes at most this many lines

// The pieces of a word too wide for a line: broken after its '_' and '=' ("NCCL_P2P_DISABLE=1"
// -> "NCCL_P2P_", "DISABLE=1"), the pieces joined again while they fit.
QStringList word_pieces(const QString& word, double width, const QFontMetrics& metrics) {
  if (metrics.horizontalAdvance(word) <= width) return {word};
  QStringList parts;
  QString part;
  for (const QChar c : word) {
    part += c;
    if (c == QLatin1Char('_') || c == QLatin1Char('=')) parts << std::exchange(part, QString());
  }
  if (!part.isEmpty()) parts << part;
  QStringList pieces;
  for (const QString& p : parts) {
    if (!pieces.isEmpty() && metrics.horizontalAdvance(pieces.back() + p) <= width)
      pieces.back() += p;
    else
      pieces << p;
  }
  return pieces;
}
}  // namespace

QString BreakdownPlot::wrapLabel(const QString& name, double width, const QFontMetrics& metrics) {
  struct Piece {
    QString text;
    bool space;  // a space before it (a new word); pieces of one word are glued
  };
  std::vector<Piece> pieces;
  for (const QString& word : name.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    const QStringList parts = word_pieces(word, width, metrics);
    for (int i = 0; i < parts.size(); ++i) pieces.push_back({parts[i], i == 0 && !pieces.empty()});
  }
  QStringList lines;
  QString line;
  size_t used = 0;
  for (; used < pieces.size(); ++used) {
    const Piece& p = pieces[used];
    const QString joined = line + (p.space && !line.isEmpty() ? QStringLiteral(" ") : QString()) + p.text;
    if (!line.isEmpty() && metrics.horizontalAdvance(joined) > width) {
      if (lines.size() == kLabelLines - 1) break;  // the last line is full
      lines << line;
      line = p.text;
    } else {
      line = joined;
    }
  }
  if (used < pieces.size()) line += QStringLiteral(" …");
  if (!line.isEmpty()) lines << line;
  return lines.join(QLatin1Char('\n'));
}

void BreakdownPlot::wrapLabels() {
  const QFontMetrics base(m_labelFont);
  const double most = base.horizontalAdvance(QString(18, QLatin1Char('n')));  // about 18 characters
  const double span = xAxis->range().size();
  const double width =
      axisRect()->width() > 0 && span > 0
          ? std::clamp(axisRect()->width() / span - 8, base.horizontalAdvance(QString(6, QLatin1Char('n'))) * 1.0, most)
          : most;  // a bar's share of the axis less a gap, before the first layout 18 characters
  if (std::abs(width - m_labelWidth) < 1) return;
  m_labelWidth = width;
  // The axis' own font where every name fits its lines whole, else a smaller one, down to 80 %.
  QFont font = m_labelFont;
  QStringList wrapped;
  for (const double scale : {1.0, 0.95, 0.9, 0.85, 0.8}) {
    font = m_labelFont;
    if (m_labelFont.pointSizeF() > 0) font.setPointSizeF(m_labelFont.pointSizeF() * scale);
    const QFontMetrics metrics(font);
    wrapped.clear();
    bool fits = true;
    for (const QString& label : m_labels) {
      wrapped << wrapLabel(label, width, metrics);
      fits = fits && !wrapped.back().endsWith(QStringLiteral("…"));
      for (const QString& line : wrapped.back().split(QLatin1Char('\n')))
        fits = fits && metrics.horizontalAdvance(line) <= width;
    }
    if (fits) break;
  }
  xAxis->setTickLabelFont(font);
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(xAxis->ticker());
  ticker->clear();
  for (int i = 0; i < wrapped.size(); ++i) ticker->addTick(i, wrapped[i]);
}

void BreakdownPlot::beforeReplot() {
  wrapLabels();
  placeFigures();
}

void BreakdownPlot::placeFigures() {
  const double tallest = m_steps.empty() ? 0.0 : *std::max_element(m_steps.begin(), m_steps.end());
  const double rangeTop = tallest > 0 ? tallest * 1.22 : 1.0;  // room for a two-line figure above the tallest bar
  yAxis->setRange(0, rangeTop);
  if (m_figures.empty()) return;
  const QFontMetrics fm(m_figures.front()->font());
  // Twice at most: the second pass after the axis grew to hold a figure that was moved up.
  for (int pass = 0; pass < 2; ++pass) {
    QRectF previous;
    double highest = axisRect()->bottom();
    for (size_t i = 0; i < m_figures.size(); ++i) {
      QCPItemText* figure = m_figures[i];
      const QStringList lines = figure->text().split(QLatin1Char('\n'));
      int width = 0;
      for (const QString& line : lines) width = std::max(width, fm.horizontalAdvance(line));
      const QMargins pad = figure->padding();
      const double height = lines.size() * fm.height() + pad.top() + pad.bottom();
      QRectF box(xAxis->coordToPixel(double(i)) - width / 2.0 - 2, yAxis->coordToPixel(m_steps[i]) - height,
                 width + 4, height);
      if (i > 0 && box.intersects(previous)) box.moveBottom(previous.top() - 1);
      figure->position->setCoords(double(i), yAxis->pixelToCoord(box.bottom()));
      previous = box;
      highest = std::min(highest, box.top());
    }
    if (highest >= axisRect()->top() || pass == 1) break;
    // The highest figure starts above the axis rect: scale the range so that what stands from the
    // axis to that figure's top fits the rect's height (the figures keep their pixel heights).
    const double needed = axisRect()->bottom() - highest + 4;
    yAxis->setRange(0, rangeTop * needed / std::max(1, axisRect()->height()));
  }
}

QColor BreakdownPlot::partColor(Part part) { return QColor(QRgb(analysis::part_rgb(part))); }

BreakdownPlot::BreakdownPlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("breakdownPlot"));
  xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  m_labelFont = xAxis->tickLabelFont();
  xAxis->grid()->setVisible(false);
  yAxis->setLabel(QStringLiteral("mean time per measured step (ms)"));
  legend->setVisible(true);
  // Legend in its own row under the plot, so it never covers a bar.
  axisRect()->insetLayout()->take(legend);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(1, 0, legendRow);
  legendRow->setMargins(QMargins(6, 0, 6, 4));
  legendRow->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(4);
  legend->setIconSize(12, 10);
  applyPalette();
}

void BreakdownPlot::setTrials(const QStringList& names, const std::vector<analysis::MeanBreakdown>& breakdowns,
                              const std::vector<double>& medianSteps) {
  clearPlottables();
  clearItems();
  m_bars.clear();
  m_steps.clear();
  legend->clearItems();
  m_labels.clear();
  QVector<double> keys;
  for (int i = 0; i < int(breakdowns.size()); ++i) {
    keys << i;
    m_labels << QStringLiteral("#%1 %2").arg(i + 1).arg(names.value(i));
    m_steps.push_back(breakdowns[size_t(i)].step_ms);
  }
  QCPBars* below = nullptr;
  for (Part part : analysis::kAllParts) {
    QVector<double> values;
    bool any = false;
    for (const auto& b : breakdowns) {
      values << b[part];
      any = any || b[part] > 0;
    }
    if (!any) continue;  // a part nobody has only clutters the legend
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setName(QString::fromUtf8(analysis::label(part).data(), int(analysis::label(part).size())));
    bars->setWidth(0.55);
    bars->setPen(QPen(palette().color(QPalette::Base), 1));
    bars->setBrush(partColor(part));  // GPU-idle parts in their pale colours
    bars->setStackingGap(0);
    bars->setData(keys, values, true);
    if (below) bars->moveAbove(below);
    below = bars;
    m_bars.emplace_back(part, bars);
  }
  m_figures.clear();
  for (size_t i = 0; i < m_steps.size(); ++i) {
    auto* text = new QCPItemText(this);
    m_figures.push_back(text);
    text->position->setCoords(double(i), m_steps[i]);
    text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    auto ms = [](double v) { return QStringLiteral("%1 ms").arg(v, 0, 'f', v < 100 ? 1 : 0); };
    // The bar's top is the mean step (means add up); the metrics' figure is the median step.
    text->setText(i < medianSteps.size() && medianSteps[i] > 0
                      ? QStringLiteral("mean %1\n(median %2)").arg(ms(m_steps[i]), ms(medianSteps[i]))
                      : QStringLiteral("mean %1").arg(ms(m_steps[i])));
    text->setColor(palette().color(QPalette::WindowText));
    text->setPadding(QMargins(0, 0, 0, 3));
  }
  xAxis->setRange(-0.6, std::max(0.6, double(m_steps.size()) - 0.4));
  xAxis->setPadding(4);
  m_labelWidth = -1;
  wrapLabels();  // to the axis rect of the last layout; beforeReplot fits them to each new one
  placeFigures();  // the value range, and the figures in the last layout; beforeReplot again in each new one
  markDirty();
}

QCPBars* BreakdownPlot::bars(Part part) const {
  for (const auto& [p, b] : m_bars)
    if (p == part) return b;
  return nullptr;
}

double BreakdownPlot::stackedSum(int trial) const {
  double sum = 0;
  for (const auto& entry : m_bars) {
    const auto it = entry.second->data()->findBegin(trial, false);
    if (it != entry.second->data()->constEnd() && it->key == trial) sum += it->value;
  }
  return sum;
}

}  // namespace tunebench::ui
