#include "ui/plots/memory_timeline_plot.h"

#include <algorithm>
#include <cmath>

#include <QFontMetrics>
#include <QLabel>

#include "core/config/script.h"
#include "ui/plots/phase_style.h"

namespace tunebench::ui {

namespace {

constexpr double kGiB = double(int64_t(1) << 30);
using protocol::MemoryPoint;
using protocol::Phase;

// One phase of the step shown: its readings, where present.
struct PhaseReadings {
  Phase phase = Phase::Forward;
  const protocol::MemoryTimelinePoint* start = nullptr;
  const protocol::MemoryTimelinePoint* peak = nullptr;
  const protocol::MemoryTimelinePoint* end = nullptr;
};

// The phases of `points` in the order the step ran them (the order of their first point).
std::vector<PhaseReadings> phases_of(const std::vector<protocol::MemoryTimelinePoint>& points) {
  std::vector<PhaseReadings> out;
  for (const auto& p : points) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PhaseReadings& r) { return r.phase == p.phase; });
    if (it == out.end()) {
      out.push_back({p.phase});
      it = out.end() - 1;
    }
    const protocol::MemoryTimelinePoint** slot =
        p.point == MemoryPoint::Start ? &it->start : p.point == MemoryPoint::Peak ? &it->peak : &it->end;
    *slot = &p;
  }
  return out;
}

// A boundary's host time since the step's start, ms (the axis title says the unit).
QString ms_label(const protocol::MemoryTimelinePoint* p) {
  if (!p || !p->offset_us) return {};
  return QString::number(double(*p->offset_us) / 1000.0, 'f', 1);
}

QColor allocated_color() { return series_color(0); }
QColor reserved_color() { return series_color(1); }

}  // namespace

MemoryTimelinePlot::MemoryTimelinePlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("memoryTimelinePlot"));
  plotLayout()->clear();
  // Row 0: the legend in its own strip; row 1: the step's phases side by side.
  m_legendRow = addLegendRow();
  m_rect = new QCPAxisRect(this);
  plotLayout()->addElement(1, 0, m_rect);
  m_rect->setRangeDrag(Qt::Orientations());
  m_rect->setRangeZoom(Qt::Orientations());
  // The phases' boundaries, labelled with their host times (text ticks: placed here, not fitted).
  m_rect->axis(QCPAxis::atBottom)->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  // Room on the right for the last boundary's time (a label the widget's edge would cut is not drawn).
  m_rect->setMinimumMargins(QMargins(0, 0, 22, 0));
  setAxisTitle(m_rect->axis(QCPAxis::atLeft), QStringLiteral("memory (GiB)"), QStringLiteral("GiB"));
  legend = new QCPLegend;
  m_legendRow->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);  // columns: LivePlot::fitLegendColumns
  legend->setIconSize(QSize(20, 10));  // three entries in one row of a third of the trial view
  legend->setLayer(QStringLiteral("legend"));
  legend->setVisible(true);

  auto graph = [this](const QString& name, const QPen& pen, const QCPScatterStyle& scatter) {
    QCPGraph* g = addGraph(m_rect->axis(QCPAxis::atBottom), m_rect->axis(QCPAxis::atLeft));
    g->setName(name);
    g->setPen(pen);
    g->setScatterStyle(scatter);
    return g;
  };
  m_allocated = graph(QStringLiteral("allocated"), QPen(allocated_color(), 2),
                      QCPScatterStyle(QCPScatterStyle::ssDisc, allocated_color(), allocated_color(), 6));
  m_reserved = graph(QStringLiteral("reserved"), QPen(reserved_color(), 2, Qt::DashLine),
                     QCPScatterStyle(QCPScatterStyle::ssSquare, reserved_color(), 6));
  // The phases' peaks: filled for allocated (labelled with its GiB), hollow for reserved (on the
  // reserved line unless the reserve grew and shrank inside the phase). One legend entry for both.
  m_allocatedPeaks = graph(QStringLiteral("peak"), Qt::NoPen,
                           QCPScatterStyle(QCPScatterStyle::ssTriangle, allocated_color(), allocated_color(), 9));
  m_allocatedPeaks->setLineStyle(QCPGraph::lsNone);
  m_reservedPeaks = graph(QStringLiteral("phase peak, reserved"), Qt::NoPen,
                          QCPScatterStyle(QCPScatterStyle::ssTriangle, reserved_color(), 9));
  m_reservedPeaks->setLineStyle(QCPGraph::lsNone);
  m_reservedPeaks->removeFromLegend(legend);

  m_note = addNote(QStringLiteral("memoryTimelineNote"));
  connect(this, &QCustomPlot::afterLayout, this, &MemoryTimelinePlot::placeNote);
  setToolTip(QStringLiteral(
      "The CUDA caching allocator's allocated and reserved bytes through the forward, backward and optimizer of the "
      "latest memory-sampled step (the last micro-step's forward and backward): each phase's start and end, and its "
      "peak (▲ allocated, △ reserved: the allocator's peak counters, reset at the phase's start; when in the phase "
      "the peak came is not known). Times: the host's, since the step's start."));
  applyPalette();
  clear();
}

void MemoryTimelinePlot::clear() {
  m_latest.clear();
  m_config.reset();
  m_cpu = m_helloSeen = m_complete = false;
  m_reason.clear();
  m_stale = true;
  markDirty();
}

void MemoryTimelinePlot::setRank(int rank) {
  if (rank == m_rank) return;
  m_rank = rank;
  m_stale = true;
  markDirty();
}

void MemoryTimelinePlot::setComplete(bool complete) {
  m_complete = complete;
  markDirty();
}

void MemoryTimelinePlot::addEvents(const EventBatch& batch) {
  bool changed = false;
  for (const auto& e : batch) {
    if (e.is<protocol::Step>()) {
      const auto& s = e.as<protocol::Step>();
      if (s.memory_timeline.empty()) continue;
      Latest& l = m_latest[e.header.rank];
      if (s.step < l.step) continue;
      l.step = s.step;
      l.points = s.memory_timeline;
      if (e.header.rank == m_rank) m_stale = true;
      changed = true;
    } else if (e.is<protocol::Hello>()) {
      const auto& h = e.as<protocol::Hello>();
      m_helloSeen = true;
      m_cpu = m_cpu || h.device_kind == "cpu";
      if (!m_config && h.config.is_object() && !h.config.empty()) m_config = config::from_json(h.config).config;
      changed = true;
    } else if (e.is<protocol::Warning>()) {
      const auto& w = e.as<protocol::Warning>();
      if (w.kind == "memory-timeline" && m_reason.isEmpty()) {
        m_reason = QString::fromStdString(w.message);
        changed = true;
      }
    }
  }
  if (changed) markDirty();
}

QString MemoryTimelinePlot::noteText() const {
  if (hasStep()) return {};
  if (!m_latest.empty())
    return QStringLiteral("Rank %1 has no memory-sampled step%2; rank %3 has.")
        .arg(m_rank)
        .arg(m_complete ? QString() : QStringLiteral(" yet"))
        .arg(m_latest.begin()->first);
  if (!m_reason.isEmpty()) return m_reason;
  if (m_cpu)
    return QStringLiteral("Memory timeline unknown on CPU: it comes from the CUDA caching allocator's counters, which "
                          "a CPU run does not have.");
  if (m_config && config::is_script(*m_config))
    return QStringLiteral("No memory timeline for a script: tunebench_probe reads the allocator's peak once per step, "
                          "not through its phases (the benchmark's worker does). The step's peak is in the metrics.");
  if (m_config) {
    const config::TrialConfig& c = *m_config;
    int64_t first_kernel = -1, first_memory = -1;
    for (int64_t i = 0; i < c.steps && first_memory < 0; ++i) {
      if (first_kernel < 0 && c.kernel_sampled(i)) first_kernel = i;
      if (c.memory_sampled(i)) first_memory = i;
    }
    if (first_kernel < 0)
      return QStringLiteral("No memory-sampled step: kernel sampling is off for this trial (timing off, or "
                            "kernel_sample_every or kernel_sample_steps 0). Memory is read on the sampled steps.");
    if (first_memory < 0)
      return QStringLiteral("No memory-sampled step: compile '%1' runs its measured steps as a CUDA graph, which "
                            "allocates nothing step by step; memory is read on eager steps only.")
          .arg(QString::fromUtf8(config::to_string(c.compile).data()));
    if (!m_complete)
      return QStringLiteral("No memory-sampled step yet: the first is step %1 (then %2 of every %3 steps).")
          .arg(first_memory)
          .arg(c.kernel_sample_steps)
          .arg(c.kernel_sample_every);
    return QStringLiteral("No step of this trial carries a memory timeline (its worker did not read one, or the "
                          "trial ended before step %1, the first memory-sampled step).")
        .arg(first_memory);
  }
  if (!m_complete && !m_helloSeen) return QStringLiteral("Waiting for the trial's first memory-sampled step.");
  return QStringLiteral("No memory timeline in this trial: none of its steps was memory-sampled (an imported trace "
                        "records none).");
}

void MemoryTimelinePlot::rebuild() {
  m_stale = false;
  for (QCPAbstractItem* item : m_items) removeItem(item);
  m_items.clear();
  for (QCPGraph* g : {m_allocated, m_reserved, m_allocatedPeaks, m_reservedPeaks}) g->data()->clear();
  m_shownStep = -1;
  m_maxGiB = 0.0;
  auto it = m_latest.find(m_rank);
  auto* ticker = static_cast<QCPAxisTickerText*>(m_rect->axis(QCPAxis::atBottom)->ticker().data());
  ticker->clear();
  if (it == m_latest.end()) return;
  m_shownStep = it->second.step;
  const std::vector<PhaseReadings> phases = phases_of(it->second.points);
  QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
  QCPAxis* y = m_rect->axis(QCPAxis::atLeft);
  const QColor text = palette().color(QPalette::WindowText);
  auto gib = [](int64_t bytes) { return double(bytes) / kGiB; };
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseReadings& r = phases[i];
    const double x0 = double(i), x1 = double(i + 1), mid = x0 + 0.5;
    // The phase's band, in its timeline colour, named at its top.
    auto* band = new QCPItemRect(this);
    band->setClipAxisRect(m_rect);
    for (auto* pos : {band->topLeft, band->bottomRight}) {
      pos->setAxes(x, y);
      pos->setAxisRect(m_rect);
      pos->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    band->topLeft->setCoords(x0, 0);
    band->bottomRight->setCoords(x1, 1);
    QColor fill = phase_color(r.phase);
    fill.setAlpha(i % 2 ? 28 : 44);
    band->setBrush(fill);
    band->setPen(Qt::NoPen);
    band->setLayer(QStringLiteral("background"));
    auto* name = new QCPItemText(this);
    name->setClipAxisRect(m_rect);
    name->position->setAxes(x, y);
    name->position->setAxisRect(m_rect);
    name->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    name->position->setCoords(mid, 1.0);  // at the bottom: memory seldom falls that low (the parameters stay)
    name->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    name->setPadding(QMargins(2, 2, 2, 2));
    name->setText(phase_name(r.phase));
    name->setColor(text);
    m_items << band << name;
    // Start and end: one reading each, joined by the line; the peak in the middle.
    for (const auto* p : {r.start, r.end}) {
      if (!p) continue;
      const double at = p == r.start ? x0 : x1;
      m_allocated->addData(at, gib(p->allocated_bytes));
      m_reserved->addData(at, gib(p->reserved_bytes));
      m_maxGiB = std::max({m_maxGiB, gib(p->allocated_bytes), gib(p->reserved_bytes)});
    }
    if (r.peak) {
      m_allocatedPeaks->addData(mid, gib(r.peak->allocated_bytes));
      m_reservedPeaks->addData(mid, gib(r.peak->reserved_bytes));
      m_maxGiB = std::max({m_maxGiB, gib(r.peak->allocated_bytes), gib(r.peak->reserved_bytes)});
      auto* value = new QCPItemText(this);
      value->setClipAxisRect(m_rect);
      value->position->setAxes(x, y);
      value->position->setAxisRect(m_rect);
      value->position->setCoords(mid, gib(r.peak->allocated_bytes));
      value->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
      value->setPadding(QMargins(2, 7, 2, 0));  // under the triangle
      value->setText(QStringLiteral("peak %1").arg(gib(r.peak->allocated_bytes), 0, 'f', 1));
      value->setColor(allocated_color());
      m_items << value;
    }
    // The boundaries' host times under the axis: a phase's start on its left edge, its end on the right.
    if (i == 0) ticker->addTick(x0, ms_label(r.start));
    ticker->addTick(x1, ms_label(r.end));
  }
  // A little room at the ends, so the first and last boundaries' times are drawn.
  x->setRange(-0.04, std::max<double>(1, double(phases.size())) + 0.04);
}

void MemoryTimelinePlot::placeNote() {
  if (!m_note->isHidden()) m_note->setGeometry(8, 0, std::max(0, width() - 16), height());
}

void MemoryTimelinePlot::beforeReplot() {
  if (m_stale) rebuild();
  const QString note = noteText();
  const bool shown = note.isEmpty();
  m_note->setText(note);
  m_note->setVisible(!shown);
  m_rect->setVisible(shown);
  m_legendRow->setVisible(shown);
  legend->setVisible(shown);
  for (QCPGraph* g : {m_allocated, m_reserved, m_allocatedPeaks, m_reservedPeaks}) g->setVisible(shown);
  m_rect->axis(QCPAxis::atLeft)->setRange(0, std::max(0.5, m_maxGiB * 1.2));
  // The axis title names the step; a narrow plot keeps the short form. (The plot's own width, less
  // the value axis' room: the axis rect's is the last layout's, which may predate this step.)
  QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
  const QString full = QStringLiteral("memory through step %1 of rank %2: host time (ms)").arg(m_shownStep).arg(m_rank);
  const QString brief = QStringLiteral("step %1, rank %2 (ms)").arg(m_shownStep).arg(m_rank);
  const bool room = QFontMetrics(x->labelFont()).horizontalAdvance(full) <= width() - 70;
  x->setLabel(!shown ? QString() : room ? full : brief);
  placeNote();
}

void MemoryTimelinePlot::applyPalette() {
  LivePlot::applyPalette();
  m_stale = true;  // the phase names take the text colour
}

int MemoryTimelinePlot::allocatedPoints() const { return m_allocated->dataCount(); }
int MemoryTimelinePlot::reservedPoints() const { return m_reserved->dataCount(); }
int MemoryTimelinePlot::peakMarks() const { return m_allocatedPeaks->dataCount(); }

double MemoryTimelinePlot::largestPeakGiB() const {
  double out = 0.0;
  for (auto it = m_allocatedPeaks->data()->constBegin(); it != m_allocatedPeaks->data()->constEnd(); ++it)
    out = std::max(out, it->value);
  return out;
}

QString MemoryTimelinePlot::note() const { return m_note->isHidden() ? QString() : m_note->text(); }

}  // namespace tunebench::ui
