#include "ui/plots/curves_plot.h"

#include <algorithm>

#include "core/analysis/step_time.h"
#include "ui/plots/phase_style.h"

namespace tunebench::ui {

CurvesPlot::CurvesPlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("curvesPlot"));
  plotLayout()->clear();
  auto* legendRow = new QCPLayoutGrid;
  m_stepRect = new QCPAxisRect(this);
  m_lossRect = new QCPAxisRect(this);
  plotLayout()->addElement(0, 0, legendRow);
  plotLayout()->addElement(1, 0, m_stepRect);
  plotLayout()->addElement(2, 0, m_lossRect);
  plotLayout()->setRowStretchFactor(0, 0.001);
  legendRow->setMargins(QMargins(6, 2, 6, 0));
  legend = new QCPLegend;
  legendRow->addElement(0, 0, legend);
  legend->setLayer(QStringLiteral("legend"));
  legend->setVisible(true);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(4);
  auto* margins = new QCPMarginGroup(this);
  for (QCPAxisRect* rect : {m_stepRect, m_lossRect}) {
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    rect->setRangeDrag(Qt::Horizontal);
    rect->setRangeZoom(Qt::Horizontal);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    rect->axis(QCPAxis::atBottom)->setTicker(ticker);
  }
  connect(m_stepRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_lossRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  connect(m_lossRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_stepRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  m_stepRect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("step time (ms, slowest rank)"));
  m_lossRect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("loss (mean over ranks)"));
  m_lossRect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("step"));
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  applyPalette();
}

int CurvesPlot::points(int trial, int panel) const {
  if (trial < 0 || size_t(trial) >= m_stepGraphs.size()) return 0;
  if (panel == 0) {  // the warm-up line repeats the first measured point
    const auto& [measured, warm] = m_stepGraphs[size_t(trial)];
    const int repeated = measured->dataCount() > 0 && warm->dataCount() > 0 ? 1 : 0;
    return measured->dataCount() + warm->dataCount() - repeated;
  }
  return m_lossGraphs[size_t(trial)]->dataCount();
}

void CurvesPlot::setTrials(const QStringList& names, const std::vector<const protocol::TrialLog*>& logs) {
  clearGraphs();
  m_stepGraphs.clear();
  m_lossGraphs.clear();
  double maxStep = 0, maxMeasuredMs = 0, maxMs = 0, lossLo = 1e300, lossHi = -1e300;
  for (size_t t = 0; t < logs.size(); ++t) {
    if (!logs[t]) continue;
    QVector<double> xs, ms, wxs, wms, lxs, losses;
    bool joined = false;  // the dotted warm-up line runs on to the first measured step
    for (const analysis::StepPoint& p : analysis::step_curve(*logs[t])) {
      (p.warmup ? wxs : xs) << double(p.step);
      (p.warmup ? wms : ms) << p.ms;
      if (!p.warmup && !joined && !wxs.isEmpty()) {
        wxs << double(p.step);
        wms << p.ms;
      }
      joined = joined || !p.warmup;
      lxs << double(p.step);
      losses << p.loss;
      maxStep = std::max(maxStep, double(p.step));
      maxMs = std::max(maxMs, p.ms);
      if (!p.warmup) maxMeasuredMs = std::max(maxMeasuredMs, p.ms);
      lossLo = std::min(lossLo, losses.back());
      lossHi = std::max(lossHi, losses.back());
    }
    const QColor color = series_color(int(t));
    const QString name = names.value(int(t));
    auto* measured = addGraph(m_stepRect->axis(QCPAxis::atBottom), m_stepRect->axis(QCPAxis::atLeft));
    measured->setName(name);
    measured->setPen(QPen(color, 1.5));
    measured->setData(xs, ms, true);
    auto* warm = addGraph(m_stepRect->axis(QCPAxis::atBottom), m_stepRect->axis(QCPAxis::atLeft));
    warm->setPen(QPen(color, 1, Qt::DotLine));
    warm->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    warm->setData(wxs, wms, true);
    warm->removeFromLegend();
    auto* loss = addGraph(m_lossRect->axis(QCPAxis::atBottom), m_lossRect->axis(QCPAxis::atLeft));
    loss->setPen(QPen(color, 1.5));
    loss->setData(lxs, losses, true);
    loss->removeFromLegend();
    m_stepGraphs.emplace_back(measured, warm);
    m_lossGraphs.push_back(loss);
  }
  m_stepRect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max(1.0, maxStep) + 0.5);
  const double top = maxMeasuredMs > 0 ? maxMeasuredMs : maxMs;
  m_stepRect->axis(QCPAxis::atLeft)->setRange(0, top > 0 ? top * 1.15 : 1.0);
  if (lossLo <= lossHi) {
    const double pad = std::max(1e-3, (lossHi - lossLo) * 0.1);
    m_lossRect->axis(QCPAxis::atLeft)->setRange(lossLo - pad, lossHi + pad);
  }
  markDirty();
}

}  // namespace tunebench::ui
