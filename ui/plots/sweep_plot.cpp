#include "ui/plots/sweep_plot.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

SweepPlot::SweepPlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("sweepPlot"));
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  applyPalette();
}

int SweepPlot::pointCount() const {
  int n = 0;
  for (const QCPGraph* g : m_graphs) n += g->dataCount();
  return n;
}

void SweepPlot::setTable(const analysis::SweepTable& table, SweepTableModel::Metric metric) {
  clearPlottables();
  m_graphs.clear();
  if (table.keys.empty()) return;
  bool numeric = true, integral = true;
  for (const auto& row : table.rows) {
    bool ok = false;
    const double v = QString::fromStdString(row.values.front()).toDouble(&ok);
    numeric = numeric && ok;
    integral = integral && ok && v == std::round(v);
  }
  // x positions: the value itself, or the index of the text value in first-seen order.
  std::map<std::string, double> textPos;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (const auto& row : table.rows)
    if (!numeric && !textPos.count(row.values.front())) {
      const double x = double(textPos.size());
      textPos[row.values.front()] = x;
      ticker->addTick(x, QString::fromStdString(row.values.front()));
    }
  if (numeric && integral) {
    // grad_accum, num_workers, world_size: whole numbers only (no "2.5" tick between 2 and 3).
    auto whole = QSharedPointer<QCPAxisTickerFixed>::create();
    whole->setTickStep(1.0);
    whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    xAxis->setTicker(whole);
  } else if (numeric) {
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  } else {
    xAxis->setTicker(ticker);
  }
  xAxis->setLabel(QString::fromStdString(table.keys.front()));
  yAxis->setLabel(SweepTableModel::metricName(metric));

  // One series per combination of the other axes' values.
  std::map<std::vector<std::string>, std::vector<const analysis::SweepRow*>> series;
  for (const auto& row : table.rows)
    series[std::vector<std::string>(row.values.begin() + 1, row.values.end())].push_back(&row);
  int index = 0;
  double lo = INFINITY, hi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& [rest, rows] : series) {
    QVector<double> xs, ys, errLow, errHigh;
    for (const analysis::SweepRow* row : rows) {
      double p25 = 0, p75 = 0;
      const double y = row->failed ? std::nan("") : SweepTableModel::metricValue(*row, metric, &p25, &p75);
      if (std::isnan(y)) continue;
      const double x = numeric ? QString::fromStdString(row->values.front()).toDouble() : textPos[row->values.front()];
      xs << x;
      ys << y;
      errLow << y - p25;
      errHigh << p75 - y;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ylo = std::min(ylo, p25);
      yhi = std::max(yhi, p75);
    }
    auto* g = addGraph();
    QStringList name;
    for (size_t k = 0; k < rest.size(); ++k)
      name << QStringLiteral("%1=%2").arg(QString::fromStdString(table.keys[k + 1]), QString::fromStdString(rest[k]));
    g->setName(name.isEmpty() ? SweepTableModel::metricName(metric) : name.join(QStringLiteral(", ")));
    g->setPen(QPen(series_color(index), 1.5));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, series_color(index), series_color(index), 6));
    g->setData(xs, ys, true);
    auto* err = new QCPErrorBars(xAxis, yAxis);
    err->setDataPlottable(g);
    err->setData(errLow, errHigh);
    err->setPen(QPen(series_color(index), 1));
    err->removeFromLegend();
    m_graphs << g;
    ++index;
  }
  if (lo <= hi) {
    const double pad = hi > lo ? (hi - lo) * 0.08 : 0.5;
    xAxis->setRange(lo - pad, hi + pad);
    const double ypad = yhi > ylo ? (yhi - ylo) * 0.15 : std::max(1.0, std::abs(yhi) * 0.1);
    yAxis->setRange(std::min(0.0, ylo - ypad), yhi + ypad);
  }
  markDirty();
}

}  // namespace tunebench::ui
