#include "ui/plots/effect_chart.h"

#include <algorithm>

namespace tunebench::ui {

EffectChart::EffectChart(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("effectChart"));
  // Horizontal bars: the key axis is the vertical one.
  m_beyond = new QCPBars(yAxis, xAxis);
  m_beyond->setName(QStringLiteral("faster, beyond the noise"));
  m_beyond->setWidth(0.6);
  m_slower = new QCPBars(yAxis, xAxis);
  m_slower->setName(QStringLiteral("slower, beyond the noise"));
  m_slower->setWidth(0.6);
  m_within = new QCPBars(yAxis, xAxis);
  m_within->setName(QStringLiteral("within the noise"));
  m_within->setWidth(0.6);
  m_errors = new QCPErrorBars(yAxis, xAxis);
  m_errors->setName(QStringLiteral("95 % interval"));
  m_errors->setErrorType(QCPErrorBars::etValueError);
  m_noise = new QCPItemRect(this);
  m_noise->setLayer(QStringLiteral("background"));
  m_noise->topLeft->setType(QCPItemPosition::ptPlotCoords);
  m_noise->bottomRight->setType(QCPItemPosition::ptPlotCoords);
  setAxisTitle(xAxis, QStringLiteral("tokens/s change vs the baseline (%)"), QStringLiteral("tokens/s (%)"));
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  applyPalette();
}

void EffectChart::applyPalette() {
  LivePlot::applyPalette();
  m_beyond->setBrush(QColor(46, 125, 50));
  m_beyond->setPen(QPen(QColor(27, 94, 32)));
  m_slower->setBrush(QColor(198, 40, 40));
  m_slower->setPen(QPen(QColor(142, 0, 0)));
  m_within->setBrush(QColor(158, 158, 158));
  m_within->setPen(QPen(QColor(117, 117, 117)));
  m_errors->setPen(QPen(palette().color(QPalette::WindowText), 1.2));
  QColor band = palette().color(QPalette::Highlight);
  band.setAlpha(40);
  m_noise->setBrush(band);
  m_noise->setPen(Qt::NoPen);
}

void EffectChart::setRateUnit(const QString& unit) {
  setAxisTitle(xAxis, QStringLiteral("%1/s change vs the baseline (%)").arg(unit), QStringLiteral("%1/s (%)").arg(unit));
}

void EffectChart::setAttribution(const investigate::Attribution& a) {
  // The unit the baseline counts (analysis::work_rate), once it is measured.
  if (a.baseline.measured_steps > 0) setRateUnit(QString::fromUtf8(analysis::work_rate(a.baseline).unit));
  QVector<double> bKeys, bValues, sKeys, sValues, wKeys, wValues, eKeys, eValues, eLow, eHigh;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  // Ranked best first: the first factor at the top (the largest key).
  std::vector<const investigate::FactorRow*> rows;
  for (const auto& f : a.factors)
    if (!f.failed) rows.push_back(&f);
  const int n = int(rows.size());
  double lo = -a.noise_floor * 100, hi = a.noise_floor * 100;
  for (int i = 0; i < n; ++i) {
    const auto& f = *rows[size_t(i)];
    const double key = n - i;
    const double v = (f.effect.ratio - 1.0) * 100.0;
    const bool slower = f.effect.beyond_noise && f.effect.ratio < 1.0;
    (slower ? sKeys : f.effect.beyond_noise ? bKeys : wKeys) << key;
    (slower ? sValues : f.effect.beyond_noise ? bValues : wValues) << v;
    eKeys << key;
    eValues << v;
    eLow << v - (f.effect.low - 1.0) * 100.0;
    eHigh << (f.effect.high - 1.0) * 100.0 - v;
    ticker->addTick(key, QString::fromStdString(f.title));
    lo = std::min(lo, (f.effect.low - 1.0) * 100.0);
    hi = std::max(hi, (f.effect.high - 1.0) * 100.0);
  }
  m_beyond->setData(bKeys, bValues, true);
  m_slower->setData(sKeys, sValues, true);
  m_within->setData(wKeys, wValues, true);
  m_errors->setDataPlottable(nullptr);
  m_errors->setData(QVector<double>(), QVector<double>());
  // Error bars need a data plottable with the same keys: a transparent graph of every bar.
  if (graphCount() == 0) addGraph(yAxis, xAxis);
  QCPGraph* anchor = graph(0);
  anchor->setLineStyle(QCPGraph::lsNone);
  anchor->setScatterStyle(QCPScatterStyle::ssNone);
  anchor->removeFromLegend();
  anchor->setData(eKeys, eValues, true);
  m_errors->setDataPlottable(anchor);
  m_errors->setData(eLow, eHigh);
  yAxis->setTicker(ticker);
  yAxis->setRange(0.3, n + 0.7);
  const double pad = std::max(5.0, (hi - lo) * 0.08);
  xAxis->setRange(lo - pad, hi + pad);
  m_noise->topLeft->setCoords(-a.noise_floor * 100, n + 0.7);
  m_noise->bottomRight->setCoords(a.noise_floor * 100, 0.3);
  markDirty();
}

int EffectChart::barCount() const { return m_beyond->dataCount() + m_slower->dataCount() + m_within->dataCount(); }
int EffectChart::beyondNoiseCount() const { return m_beyond->dataCount() + m_slower->dataCount(); }

}  // namespace tunebench::ui
