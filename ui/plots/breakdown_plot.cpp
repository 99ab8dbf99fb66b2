#include "ui/plots/breakdown_plot.h"

#include <algorithm>

#include "core/analysis/phase_style.h"
#include "ui/plots/phase_style.h"

namespace tunebench::ui {

using analysis::Part;

namespace {
// A trial name on at most three lines of about `width` characters, broken between words only, so
// long names stay under their own bar instead of running into (or past) the next one. A word
// longer than a line keeps its line; what does not fit in three lines ends in "…" after a word.
QString wrap_label(const QString& name, int width) {
  const QStringList words = name.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  QStringList lines;
  QString line;
  int used = 0;
  for (; used < words.size(); ++used) {
    const QString& word = words[used];
    if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
      if (lines.size() == 2) break;  // a third line is full
      lines << line;
      line.clear();
    }
    line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
  }
  if (used < words.size()) line += QStringLiteral(" …");
  if (!line.isEmpty()) lines << line;
  return lines.join(QLatin1Char('\n'));
}
}  // namespace

QColor BreakdownPlot::partColor(Part part) { return QColor(QRgb(analysis::part_rgb(part))); }

BreakdownPlot::BreakdownPlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("breakdownPlot"));
  xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
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
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(xAxis->ticker());
  ticker->clear();
  QVector<double> keys;
  for (int i = 0; i < int(breakdowns.size()); ++i) {
    keys << i;
    ticker->addTick(i, wrap_label(QStringLiteral("#%1 %2").arg(i + 1).arg(names.value(i)), 18));
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
  double top = 0;
  for (size_t i = 0; i < m_steps.size(); ++i) {
    top = std::max(top, m_steps[i]);
    auto* text = new QCPItemText(this);
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
  yAxis->setRange(0, top > 0 ? top * 1.22 : 1.0);  // room for the two-line label above the tallest bar
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
