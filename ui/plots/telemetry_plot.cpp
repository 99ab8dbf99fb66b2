#include "ui/plots/telemetry_plot.h"

#include <algorithm>

#include <QLabel>

#include "ui/plots/phase_style.h"
#include "ui/plots/time_axis_ticker.h"

namespace tunebench::ui {

namespace {
constexpr double kGiB = double(int64_t(1) << 30);
}

TelemetryPlot::TelemetryPlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("telemetryPlot"));
  plotLayout()->clear();
  // Row 0: the legend in its own strip (it sat inside the utilisation panel, over its lines and
  // axis in a short panel); rows 1-3: the panels (fitPanels lays them out again).
  m_legendRow = addLegendRow();
  auto* margins = new QCPMarginGroup(this);
  auto ticker = QSharedPointer<TimeAxisTicker>::create();
  for (int i = 0; i < 3; ++i) {
    m_rects[i] = new QCPAxisRect(this);
    plotLayout()->addElement(i + 1, 0, m_rects[i]);
    m_rects[i]->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    m_rects[i]->setRangeDrag(Qt::Horizontal);
    m_rects[i]->setRangeZoom(Qt::Horizontal);
    QCPAxis* x = m_rects[i]->axis(QCPAxis::atBottom);
    x->setTicker(ticker);
    x->setTickLabels(i == 2);                                      // one time scale at the bottom is enough
    m_rects[i]->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);  // short panels: few labels
  }
  // The three panels share one time range, whichever the user drags.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (j != i)
        connect(m_rects[i]->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
                m_rects[j]->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  m_rects[2]->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("time since the first event"));
  legend = new QCPLegend;
  m_legendRow->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);  // columns: LivePlot::fitLegendColumns
  legend->setLayer(QStringLiteral("legend"));
  legend->setVisible(true);
  setMode(false);
  m_modeSet = false;
  m_note = addNote(QStringLiteral("telemetryNote"));
  // The note's row under the panels: an empty layout element as high as the note's lines (fitPanels),
  // the label over it.
  m_noteRow = new QCPLayoutElement(this);
  m_noteRow->setVisible(false);
  connect(this, &QCustomPlot::afterLayout, this, &TelemetryPlot::placeNote);
  applyPalette();
  clear();
}

void TelemetryPlot::setComplete(bool complete) {
  m_complete = complete;
  markDirty();
}

QString TelemetryPlot::note() const { return m_note->isHidden() ? QString() : m_note->text(); }

bool TelemetryPlot::hasSamples(int panel) const {
  for (const auto& [name, s] : m_series)
    if (s.graphs[panel]->dataCount() > 0) return true;
  return false;
}

QString TelemetryPlot::noteText() const {
  if (m_series.empty() && m_complete && m_busy.empty())
    return QStringLiteral(
        "No telemetry in this trial: it has no device samples (a torch.profiler trace records none; "
        "a run's come from NVML on GPUs, /proc on the CPU).");
  if (m_series.empty() && m_complete)
    return QStringLiteral(
        "No telemetry samples in this trial (a torch.profiler trace records none): only the GPU "
        "busy share of its kernel-sampled steps.");
  if (m_cpuMode && !m_series.empty())
    return QStringLiteral("No power panel: NVML measures GPUs only.");  // one line: the panels' titles say the rest
  if (!m_cpuMode && !m_gpmProblem.isEmpty() && m_smActivity.empty()) return m_gpmProblem;
  return {};
}

void TelemetryPlot::placeNote() {
  if (m_note->isHidden()) return;
  // Over the empty plot, centred; or in its own row under the panels (the layout keeps it free).
  if (m_shown == 0) {
    m_note->setGeometry(8, 0, width() - 16, height());
    m_note->setAlignment(Qt::AlignCenter);
  } else {
    const QRect strip = m_noteRow->outerRect();
    m_note->setGeometry(strip.left() + 8, strip.top(), std::max(0, strip.width() - 16), strip.height());
    m_note->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  }
}

void TelemetryPlot::setDefaultMode(bool cpu) {
  m_defaultCpu = cpu;
  if (!m_modeSet) {
    setMode(cpu);
    m_modeSet = false;  // the first sample still decides
    markDirty();
  }
}

void TelemetryPlot::setMode(bool cpu) {
  m_cpuMode = cpu;
  m_modeSet = true;
  setAxisTitle(m_rects[0]->axis(QCPAxis::atLeft),
               cpu ? QStringLiteral("CPU (% of a core)") : QStringLiteral("GPU util (%)"),
               cpu ? QStringLiteral("CPU %") : QStringLiteral("util %"));
  setAxisTitle(m_rects[1]->axis(QCPAxis::atLeft),
               cpu ? QStringLiteral("RSS (GiB)") : QStringLiteral("GPU memory (GiB)"), QStringLiteral("GiB"));
  setAxisTitle(m_rects[2]->axis(QCPAxis::atLeft),
               cpu ? QStringLiteral("power (W, GPU only)") : QStringLiteral("power (W)"), QStringLiteral("W"));
}

TelemetryPlot::Series& TelemetryPlot::series(const QString& name, int colorIndex) {
  auto it = m_series.find(name);
  if (it != m_series.end()) return it->second;
  Series s;
  for (int i = 0; i < 3; ++i) {
    s.graphs[i] = addGraph(m_rects[i]->axis(QCPAxis::atBottom), m_rects[i]->axis(QCPAxis::atLeft));
    s.graphs[i]->setName(name);
    s.graphs[i]->setPen(QPen(series_color(colorIndex), 1));  // width 1: the raster engine's fast path
    if (i > 0) s.graphs[i]->removeFromLegend(legend);
    s.graphs[i]->setVisible(m_rects[i]->visible());
  }
  return m_series.emplace(name, s).first->second;
}

void TelemetryPlot::addEvents(const EventBatch& batch) {
  bool changed = false;
  for (const auto& e : batch) {
    if (!m_haveOrigin) {
      m_haveOrigin = true;
      m_origin_us = e.header.t_us;
    }
    if (e.is<protocol::Step>()) {
      const auto& st = e.as<protocol::Step>();
      if (!st.gpu_sampled || st.step_ms <= 0 || st.end_us <= 0) continue;
      if (!m_modeSet || m_cpuMode) setMode(false);  // kernel samples are a GPU's (an imported trace has no NVML)
      const int rank = e.header.rank;
      QCPGraph*& g = m_busy[rank];
      if (!g) {
        g = addGraph(m_rects[0]->axis(QCPAxis::atBottom), m_rects[0]->axis(QCPAxis::atLeft));
        g->setName(QStringLiteral("rank %1: GPU busy (kernels, sampled steps)").arg(rank));
        QPen pen(series_color(rank), 1, Qt::DashLine);
        g->setPen(pen);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, series_color(rank), series_color(rank), 6));
      }
      const double t = double(st.end_us - m_origin_us) / 1e6;
      m_latest_s = std::max(m_latest_s, t);
      g->addData(t, std::clamp(100.0 * st.gpu_busy_ms / st.step_ms, 0.0, 100.0));
      changed = true;
      continue;
    }
    if (e.is<protocol::Warning>()) {
      const auto& w = e.as<protocol::Warning>();
      if (w.kind == "gpm" && m_gpmProblem.isEmpty()) {
        m_gpmProblem = QString::fromStdString(w.message);
        changed = true;
      }
      continue;
    }
    if (!e.is<protocol::GpuSample>()) continue;
    const auto& g = e.as<protocol::GpuSample>();
    const bool cpu = g.index < 0;
    if (!m_modeSet || (cpu != m_cpuMode && !cpu)) setMode(cpu);  // one GPU sample makes it a GPU run
    if (cpu != m_cpuMode) continue;
    const double t = double(e.header.t_us - m_origin_us) / 1e6;
    m_latest_s = std::max(m_latest_s, t);
    Series& s = cpu ? series(QStringLiteral("rank %1").arg(e.header.rank), e.header.rank)
                    : series(QStringLiteral("GPU %1").arg(g.index), g.index);
    const std::optional<double> values[3] = {
        cpu ? g.cpu_pct : g.util_pct,
        cpu ? (g.rss_bytes ? std::optional<double>(double(*g.rss_bytes) / kGiB) : std::nullopt)
            : (g.mem_used_bytes ? std::optional<double>(double(*g.mem_used_bytes) / kGiB) : std::nullopt),
        g.power_w};
    for (int i = 0; i < 3; ++i)
      if (values[i]) {
        s.graphs[i]->addData(t, *values[i]);
        m_max[i] = std::max(m_max[i], *values[i]);
      }
    if (g.counters.sm_activity_pct) activityGraph(m_smActivity, g.index, false)->addData(t, *g.counters.sm_activity_pct);
    if (g.counters.tensor_activity_pct)
      activityGraph(m_tensorActivity, g.index, true)->addData(t, *g.counters.tensor_activity_pct);
    changed = true;
  }
  if (changed) markDirty();
}

QCPGraph* TelemetryPlot::activityGraph(std::map<int, QCPGraph*>& graphs, int index, bool tensor) {
  QCPGraph*& g = graphs[index];
  if (!g) {
    g = addGraph(m_rects[0]->axis(QCPAxis::atBottom), m_rects[0]->axis(QCPAxis::atLeft));
    g->setName(QStringLiteral("GPU %1: %2 (GPM)").arg(index).arg(tensor ? QStringLiteral("tensor-core activity")
                                                                         : QStringLiteral("SM activity")));
    g->setPen(QPen(series_color(index), 1, tensor ? Qt::DashDotLine : Qt::DotLine));
    g->setVisible(m_rects[0]->visible());
  }
  return g;
}

int TelemetryPlot::activityPoints(int index, bool tensor) const {
  const auto& graphs = tensor ? m_tensorActivity : m_smActivity;
  auto it = graphs.find(index);
  return it == graphs.end() ? 0 : it->second->dataCount();
}

void TelemetryPlot::clear() {
  for (auto& [name, s] : m_series)
    for (QCPGraph* g : s.graphs) removeGraph(g);
  m_series.clear();
  for (auto* graphs : {&m_smActivity, &m_tensorActivity}) {
    for (auto& [index, g] : *graphs) removeGraph(g);
    graphs->clear();
  }
  m_gpmProblem.clear();
  for (auto& [rank, g] : m_busy) removeGraph(g);
  m_busy.clear();
  m_haveOrigin = m_modeSet = false;
  m_complete = false;
  setMode(m_defaultCpu);
  m_modeSet = false;
  m_latest_s = 0.0;
  std::fill(std::begin(m_max), std::end(m_max), 0.0);
  m_rects[0]->axis(QCPAxis::atBottom)->setRange(0, 10);
  m_rects[0]->axis(QCPAxis::atLeft)->setRange(0, 100);
  m_rects[1]->axis(QCPAxis::atLeft)->setRange(0, 1);
  m_rects[2]->axis(QCPAxis::atLeft)->setRange(0, 100);
  markDirty();
}

void TelemetryPlot::fitPanels() {
  // The panels that can have data: none of a complete trial without samples, not power for CPU
  // ranks (only NVML measures it). Before the first sample of a live run: all of them, waiting.
  std::vector<int> wanted;
  for (int i = 0; i < 3; ++i) {
    // A complete trial without samples: nothing, or only the GPU busy of its kernel-sampled steps.
    if (m_complete && m_series.empty() && (m_busy.empty() || i > 0)) continue;
    if (i == 2 && m_cpuMode && !m_series.empty() && !hasSamples(2)) continue;
    wanted.push_back(i);
  }
  // About 70 px per panel, so each keeps a readable axis: memory and power leave first. The
  // legend's strip comes off the top.
  const QString note = noteText();
  m_note->setText(note);
  m_note->setVisible(!note.isEmpty());
  // The note's row is as high as its lines wrapped to the plot's width (a narrow dock wraps it).
  const int noteHeight =
      std::max(m_note->heightForWidth(std::max(1, width() - 16)), m_note->fontMetrics().height()) + 6;
  // The legend's strip and the note's row come off the height too.
  const int legendPx = legend->itemCount() ? m_legendRow->minimumOuterSizeHint().height() : 0;
  const int room = std::clamp((height() - 50 - legendPx - (note.isEmpty() ? 0 : noteHeight)) / 70, 1, 3);
  if (int(wanted.size()) > room) wanted.resize(size_t(room));
  const int shown = int(wanted.size());
  const bool noteRow = !note.isEmpty() && shown > 0;
  m_noteRow->setMinimumSize(0, noteHeight);
  m_noteRow->setMaximumSize(QWIDGETSIZE_MAX, noteHeight);
  bool same = shown == m_shown && noteRow == m_noteInLayout;
  for (int i = 0; i < 3 && same; ++i)
    same = m_rects[i]->visible() == (std::find(wanted.begin(), wanted.end(), i) != wanted.end());
  if (!same) {
    m_shown = shown;
    m_noteInLayout = noteRow;
    for (QCPLayoutElement* e : {static_cast<QCPLayoutElement*>(m_rects[0]), static_cast<QCPLayoutElement*>(m_rects[1]),
                                static_cast<QCPLayoutElement*>(m_rects[2]), m_noteRow,
                                static_cast<QCPLayoutElement*>(m_legendRow)})
      if (plotLayout()->elements(false).contains(e)) plotLayout()->take(e);
    plotLayout()->simplify();
    for (int i = 0; i < 3; ++i) m_rects[i]->setVisible(false);
    // The legend's strip only over panels: an empty plot is its centred note alone.
    const int first = shown > 0 ? 1 : 0;
    m_legendRow->setVisible(shown > 0);
    if (shown > 0) {
      plotLayout()->addElement(0, 0, m_legendRow);
      plotLayout()->setRowStretchFactor(0, 0.001);
    }
    for (int row = 0; row < shown; ++row) {
      QCPAxisRect* rect = m_rects[wanted[size_t(row)]];
      rect->setVisible(true);
      plotLayout()->addElement(first + row, 0, rect);
      plotLayout()->setRowStretchFactor(first + row, 1);
    }
    m_noteRow->setVisible(noteRow);
    if (noteRow) {
      plotLayout()->addElement(first + shown, 0, m_noteRow);
      plotLayout()->setRowStretchFactor(first + shown, 0.001);
    }
    for (int i = 0; i < 3; ++i) {
      QCPAxis* x = m_rects[i]->axis(QCPAxis::atBottom);
      const bool lowest = shown > 0 && i == wanted.back();
      x->setTickLabels(lowest);  // one time scale, under the lowest panel shown
      x->setLabel(lowest ? QStringLiteral("time since the first event") : QString());
    }
  }
  // A panel out of the layout keeps its old rectangle: its graphs must not draw there.
  for (auto& [name, s] : m_series)
    for (int i = 0; i < 3; ++i) s.graphs[i]->setVisible(m_rects[i]->visible());
  for (auto& [rank, g] : m_busy) g->setVisible(m_rects[0]->visible());
  for (auto* graphs : {&m_smActivity, &m_tensorActivity})
    for (auto& [index, g] : *graphs) g->setVisible(m_rects[0]->visible());
  legend->setVisible(shown > 0);
  placeNote();
}

void TelemetryPlot::beforeReplot() {
  fitPanels();
  m_rects[0]->axis(QCPAxis::atBottom)->setRange(0, std::max(1.0, m_latest_s * 1.02));
  m_rects[0]->axis(QCPAxis::atLeft)->setRange(0, std::max(100.0, m_max[0] * 1.1));
  m_rects[1]->axis(QCPAxis::atLeft)->setRange(0, std::max(0.5, m_max[1] * 1.15));
  m_rects[2]->axis(QCPAxis::atLeft)->setRange(0, std::max(50.0, m_max[2] * 1.15));
}

int TelemetryPlot::busyPoints(int rank) const {
  auto it = m_busy.find(rank);
  return it == m_busy.end() ? 0 : it->second->dataCount();
}

std::optional<double> TelemetryPlot::lastBusyPct(int rank) const {
  auto it = m_busy.find(rank);
  if (it == m_busy.end() || it->second->dataCount() == 0) return std::nullopt;
  return (it->second->data()->constEnd() - 1)->value;
}

int TelemetryPlot::samples(const QString& name, int panel) const {
  auto it = m_series.find(name);
  return it == m_series.end() ? 0 : it->second.graphs[panel]->dataCount();
}

}  // namespace tunebench::ui
