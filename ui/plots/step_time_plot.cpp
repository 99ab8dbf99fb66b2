#include "ui/plots/step_time_plot.h"

#include <algorithm>

#include <QLabel>

#include "core/analysis/phase_breakdown.h"
#include "core/analysis/throughput.h"
#include "core/metrics/step_time.h"

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

StepTimePlot::StepTimePlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("stepTimePlot"));
  plotLayout()->clear();
  m_stepRect = new QCPAxisRect(this);
  m_throughputRect = new QCPAxisRect(this);
  // Row 0: the legends side by side; rows 1 and 2: the plots. Nothing covers an axis or a point.
  auto* legends = new QCPLayoutGrid;
  m_legends = legends;
  plotLayout()->addElement(0, 0, legends);
  plotLayout()->addElement(1, 0, m_stepRect);
  plotLayout()->addElement(2, 0, m_throughputRect);
  plotLayout()->setRowStretchFactor(0, 0.001);
  legends->setMargins(QMargins(6, 2, 6, 0));
  auto* margins = new QCPMarginGroup(this);
  for (QCPAxisRect* rect : {m_stepRect, m_throughputRect}) {
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    rect->setRangeDrag(Qt::Horizontal);
    rect->setRangeZoom(Qt::Horizontal);
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("step"));
    // Steps are integers: ticks on whole steps only (1, 2, 5, 10, ... apart).
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    rect->axis(QCPAxis::atBottom)->setTicker(ticker);
  }
  // One step axis with labels, under the lower plot: the upper one keeps its ticks only.
  m_stepRect->axis(QCPAxis::atBottom)->setLabel(QString());
  m_stepRect->axis(QCPAxis::atBottom)->setTickLabels(false);
  setAxisTitle(m_stepRect->axis(QCPAxis::atLeft), QStringLiteral("step time (ms)"), QStringLiteral("ms"));
  setAxisTitle(m_throughputRect->axis(QCPAxis::atLeft), QStringLiteral("tokens/s"), QStringLiteral("tok/s"));
  // Both rects show the same steps.
  connect(m_stepRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_throughputRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  connect(m_throughputRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_stepRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));

  legend = new QCPLegend;
  legends->addElement(0, 0, legend);
  legend->setLayer(QStringLiteral("legend"));
  legend->setVisible(true);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(8);
  m_throughputLegend = new QCPLegend;
  legends->addElement(0, 1, m_throughputLegend);
  m_throughputLegend->setLayer(QStringLiteral("legend"));
  m_throughputLegend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  auto* throughputLegend = m_throughputLegend;

  auto axes = [](QCPAxisRect* r) { return std::pair(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft)); };
  auto [tx, ty] = axes(m_throughputRect);
  m_total = addGraph(tx, ty);
  m_total->setName(QStringLiteral("total"));
  m_total->setPen(QPen(palette().color(QPalette::WindowText), 1));  // restyled in applyPalette
  m_perGpu = addGraph(tx, ty);
  m_perGpu->setName(QStringLiteral("per rank"));
  m_perGpu->setPen(QPen(QColor(0x2b, 0x6c, 0xb0), 1, Qt::DashLine));
  for (QCPGraph* g : {m_total, m_perGpu}) {
    g->removeFromLegend(legend);
    g->addToLegend(throughputLegend);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
  }
  throughputLegend->setBorderPen(Qt::NoPen);

  m_warmup = new QCPItemRect(this);
  m_warmup->setClipAxisRect(m_stepRect);
  for (auto* pos : {m_warmup->topLeft, m_warmup->bottomRight}) {
    pos->setAxes(m_stepRect->axis(QCPAxis::atBottom), m_stepRect->axis(QCPAxis::atLeft));
    pos->setAxisRect(m_stepRect);
  }
  m_warmup->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_warmup->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_warmup->setPen(Qt::NoPen);
  m_warmup->setBrush(QColor(128, 128, 128, 40));
  m_warmup->setVisible(false);
  m_warmupLabel = new QCPItemText(this);
  m_warmupLabel->setClipAxisRect(m_stepRect);
  m_warmupLabel->position->setAxes(m_stepRect->axis(QCPAxis::atBottom), m_stepRect->axis(QCPAxis::atLeft));
  m_warmupLabel->position->setAxisRect(m_stepRect);
  m_warmupLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_warmupLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_warmupLabel->setPadding(QMargins(3, 2, 3, 2));
  m_warmupLabel->setVisible(false);
  m_throughputNote = addNote(QStringLiteral("throughputNote"));
  m_throughputNote->setText(QStringLiteral("throughput unknown: the trial does not say how many tokens a step carries "
                                           "(set micro_batch, seq_len and grad_accum in Trial > Settings…; "
                                           "samples_per_step for a model without tokens, a CNN)"));
  applyPalette();
  clear();
}

QCPGraph* StepTimePlot::rankGraph(int rank) {
  auto it = m_rankGraphs.find(rank);
  if (it != m_rankGraphs.end()) return it->second;
  QCPGraph* g = addGraph(m_stepRect->axis(QCPAxis::atBottom), m_stepRect->axis(QCPAxis::atLeft));
  g->setName(QStringLiteral("rank %1").arg(rank));
  g->setPen(QPen(series_color(rank), 1));  // width 1: the raster engine's fast path
  // Ranks often overlap exactly; distinct markers (set in beforeReplot) keep every rank visible.
  m_rankGraphs[rank] = g;
  // The legend reads rank 0, 1, 2, ... whichever rank reports first.
  for (auto& [r, graph] : m_rankGraphs) {
    graph->removeFromLegend(legend);
    graph->addToLegend(legend);
  }
  return g;
}

void StepTimePlot::addEvents(const EventBatch& batch) {
  bool changed = false;
  for (const auto& e : batch) {
    if (e.is<protocol::Hello>()) {
      const auto& h = e.as<protocol::Hello>();
      m_worldSize = std::max(m_worldSize, h.world_size);
      // Each rank that says hello gets its graph: not every rank of the world, since a trace
      // import may hold only some of them (the legend lists no rank that is not there).
      if (e.header.rank >= 0 && e.header.rank < 4096) rankGraph(e.header.rank);
      if (h.config.contains("warmup") && h.config["warmup"].is_number_integer())
        m_warmupSteps = h.config["warmup"].get<int64_t>();
      m_configSamples[e.header.rank] = analysis::configured_samples_per_rank_step(h.config);
    } else if (e.is<protocol::Step>()) {
      addStep(e.header.rank, e.as<protocol::Step>());
      changed = true;
    }
  }
  if (changed) markDirty();
}

void StepTimePlot::addStep(int rank, const protocol::Step& s) {
  m_worldSize = std::max(m_worldSize, rank + 1);
  rankGraph(rank)->addData(double(s.step), s.step_ms);
  m_maxStep = std::max(m_maxStep, double(s.step));
  m_maxMs = std::max(m_maxMs, s.step_ms);
  const bool warm = s.warmup || s.step < m_warmupSteps;
  if (s.warmup) m_warmupSteps = std::max(m_warmupSteps, s.step + 1);
  if (warm)
    m_maxWarmupMs = std::max(m_maxWarmupMs, s.step_ms);
  else
    m_maxMeasuredMs = std::max(m_maxMeasuredMs, s.step_ms);
  Pending& p = m_pending[s.step];
  p.tokens += s.tokens;  // a stored trace's steps carry its configured tokens (trial_log_events)
  // A model counted in samples: what its config says a rank's step carries (analysis/throughput.h).
  if (const auto it = m_configSamples.find(rank); it != m_configSamples.end()) p.samples += it->second;
  p.max_ms = std::max(p.max_ms, double(metrics::step_duration_us(s)) / 1000.0);  // the slowest rank: metrics/step_time.h
  if (++p.ranks < m_worldSize) return;
  if (p.tokens <= 0 && p.samples > 0 && !m_samples && m_total->dataCount() == 0) {
    m_samples = true;  // a model without tokens (a CNN): samples/s, the analysis' samples_per_s
    setAxisTitle(m_throughputRect->axis(QCPAxis::atLeft), QStringLiteral("samples/s"), QStringLiteral("smp/s"));
  }
  const int64_t work = m_samples ? p.samples : p.tokens;
  if (work <= 0) {
    m_tokensUnknown = true;  // unknown, not 0 tokens/s
  } else if (p.max_ms > 0) {
    const double total = metrics::tokens_per_second(double(work), p.max_ms);  // the analysis' rate
    m_total->addData(double(s.step), total);
    m_perGpu->addData(double(s.step), total / m_worldSize);
    m_maxTokens = std::max(m_maxTokens, total);
  }
  m_pending.erase(s.step);
}

void StepTimePlot::clear() {
  for (auto& [rank, g] : m_rankGraphs) removeGraph(g);
  m_rankGraphs.clear();
  m_total->data()->clear();
  m_perGpu->data()->clear();
  m_pending.clear();
  m_tokensUnknown = false;
  m_configSamples.clear();
  if (m_samples) {
    m_samples = false;
    setAxisTitle(m_throughputRect->axis(QCPAxis::atLeft), QStringLiteral("tokens/s"), QStringLiteral("tok/s"));
  }
  m_worldSize = 1;
  m_warmupSteps = 0;
  m_maxStep = m_maxMs = m_maxTokens = 0.0;
  m_maxMeasuredMs = m_maxWarmupMs = 0.0;
  m_stepRect->axis(QCPAxis::atBottom)->setRange(-0.5, 10.5);
  m_stepRect->axis(QCPAxis::atLeft)->setRange(0, 100);
  m_throughputRect->axis(QCPAxis::atLeft)->setRange(0, 1000);
  markDirty();
}

void StepTimePlot::fitPanels() {
  const bool two = height() >= kTwoPanelHeight;
  if (two == m_throughputShown) return;
  m_throughputShown = two;
  if (two) {
    plotLayout()->addElement(2, 0, m_throughputRect);
  } else {
    plotLayout()->take(m_throughputRect);
    plotLayout()->simplify();
  }
  m_throughputRect->setVisible(two);
  m_throughputLegend->setVisible(two);
  // A hidden legend still takes its width in the row: out of the row with its panel, so the ranks'
  // entries keep the whole width of a narrow plot.
  if (two) {
    m_legends->addElement(0, 1, m_throughputLegend);
  } else {
    m_legends->take(m_throughputLegend);
    m_legends->simplify();
  }
  for (QCPGraph* g : {m_total, m_perGpu}) g->setVisible(two);  // out of the layout: must not draw
  // The step axis with labels is the lowest panel's.
  QCPAxis* upper = m_stepRect->axis(QCPAxis::atBottom);
  upper->setTickLabels(!two);
  upper->setLabel(two ? QString() : QStringLiteral("step"));
}

void StepTimePlot::beforeReplot() {
  fitPanels();
  m_stepRect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max(10.0, m_maxStep) + 0.5);
  // Scaled to the measured steps once there are any; before that, to what there is.
  const double topMs = m_maxMeasuredMs > 0 ? m_maxMeasuredMs : m_maxMs;
  // Throughput is scaled to every point: a warm-up step faster than the measured ones (a machine
  // that got busier) would otherwise draw the line above its panel. Slow warm-up steps are low
  // points and flatten nothing.
  const double topTokens = m_maxTokens;
  // Warm-up points above the measured range are clipped and a label at the top says how high they
  // went: the range leaves that label's band above the highest measured point (it covered them).
  const bool clipped = m_maxMeasuredMs > 0 && m_maxWarmupMs > topMs * 1.15;
  double headroom = 1.15;
  if (clipped && m_stepRect->height() > 0) {
    // The text, its padding, and a marker's size under it.
    const double labelPx = QFontMetrics(m_warmupLabel->font()).height() + 4 + 6 + 2;
    headroom = std::max(headroom, 1.0 / std::max(0.4, 1.0 - labelPx / m_stepRect->height()));
  }
  if (topMs > 0) m_stepRect->axis(QCPAxis::atLeft)->setRange(0, topMs * headroom);
  if (topTokens > 0) m_throughputRect->axis(QCPAxis::atLeft)->setRange(0, topTokens * 1.15);
  // Markers help with a few steps and cost a lot with thousands (each is drawn): drop them then.
  const bool markers = m_maxStep < kMaxStepsWithMarkers;
  for (auto& [rank, g] : m_rankGraphs)
    if ((g->scatterStyle().shape() != QCPScatterStyle::ssNone) != markers) {
      static const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare,
                                                             QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond};
      g->setScatterStyle(markers ? QCPScatterStyle(shapes[rank % 4], 6) : QCPScatterStyle());
    }
  for (QCPGraph* g : {m_total, m_perGpu})
    g->setScatterStyle(markers ? QCPScatterStyle(QCPScatterStyle::ssDisc, 4) : QCPScatterStyle());
  const bool unknown = m_tokensUnknown && m_total->dataCount() == 0 && m_throughputShown;
  m_throughputNote->setVisible(unknown);
  if (unknown) m_throughputNote->setGeometry(m_throughputRect->rect().adjusted(8, 4, -8, -4));
  m_warmup->setVisible(m_warmupSteps > 0);
  m_warmup->topLeft->setCoords(-0.5, 0.0);
  m_warmup->bottomRight->setCoords(double(m_warmupSteps) - 0.5, 1.0);
  m_warmupLabel->setVisible(m_warmupSteps > 0 && clipped);
  if (clipped) {
    m_warmupLabel->position->setCoords(-0.5, 0.0);
    m_warmupLabel->setText(QStringLiteral("warm-up ↑ %1 ms").arg(m_maxWarmupMs, 0, 'f', m_maxWarmupMs < 100 ? 1 : 0));
    m_warmupLabel->setColor(palette().color(QPalette::WindowText));
  }
}

void StepTimePlot::applyPalette() {
  LivePlot::applyPalette();
  if (m_total) m_total->setPen(QPen(palette().color(QPalette::WindowText), 1));  // black on light, white on dark
  if (m_throughputLegend) {
    m_throughputLegend->setBrush(legend->brush());
    m_throughputLegend->setBorderPen(Qt::NoPen);
    m_throughputLegend->setTextColor(palette().color(QPalette::WindowText));
  }
}

int StepTimePlot::stepPoints(int rank) const {
  auto it = m_rankGraphs.find(rank);
  return it == m_rankGraphs.end() ? 0 : it->second->dataCount();
}

int StepTimePlot::throughputPoints() const { return m_total->dataCount(); }

}  // namespace tunebench::ui
