#include "ui/plots/timeline_data.h"

#include <algorithm>

#include <QLocale>
#include <QString>

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

void TimelineData::add(const EventBatch& batch) {
  for (const auto& e : batch) {
    const int rank = e.header.rank;
    if (rank < 0 || rank > 4096) continue;  // a corrupt header must not allocate the world
    if (!m_haveOrigin) {
      m_haveOrigin = true;
      m_origin_us = e.header.t_us;
    }
    if (size_t(rank) >= m_clockOffset_us.size()) m_clockOffset_us.resize(size_t(rank) + 1, 0);
    if (e.is<protocol::Hello>()) {
      const auto& hello = e.as<protocol::Hello>();
      m_clockOffset_us[size_t(rank)] = hello.clock_offset_us;
      (hello.device_kind == "cpu" ? m_cpuHello : m_gpuHello) = true;
    }
    if (rank + 1 > m_rows.ranks) {
      m_rows.ranks = rank + 1;
      m_bars.resize(size_t(m_rows.count()));
      m_maxDuration_s.resize(size_t(m_rows.count()), 0.0);
    }
    if (e.is<protocol::Step>()) addStep(rank, e.as<protocol::Step>());
  }
}

void TimelineData::addStep(int rank, const protocol::Step& step) {
  const int64_t offset = m_clockOffset_us[size_t(rank)] - m_origin_us;
  auto seconds = [&](int64_t us) { return double(us + offset) / 1e6; };
  // Markers follow the lowest rank that reports (rank 0 normally).
  if (m_markRank < 0 || rank < m_markRank) {
    if (rank < m_markRank) {
      m_marks.clear();
      m_recentSteps_s.clear();
    }
    m_markRank = rank;
  }
  if (rank == m_markRank) {
    const StepMark mark{seconds(step.start_us), step.step, step.warmup};
    if (m_marks.empty() || m_marks.back().t_s <= mark.t_s)
      m_marks.push_back(mark);
    else
      m_marks.insert(std::upper_bound(m_marks.begin(), m_marks.end(), mark.t_s,
                                      [](double t, const StepMark& m) { return t < m.t_s; }),
                     mark);
    if (!step.warmup && step.end_us > step.start_us) {
      m_recentSteps_s.push_back(double(step.end_us - step.start_us) / 1e6);
      if (m_recentSteps_s.size() > 9) m_recentSteps_s.erase(m_recentSteps_s.begin());
    }
  }
  for (const auto& in : step.intervals) {
    TimelineBar bar{seconds(in.start_us), seconds(in.end_us), in.phase, in.bytes, in.busbw_gbps, step.step, in.label};
    if (size_t(in.phase) >= m_phasesSeen.size()) m_phasesSeen.resize(size_t(in.phase) + 1, false);
    m_phasesSeen[size_t(in.phase)] = true;
    m_earliest_s = std::min(m_earliest_s, bar.start_s);
    std::vector<TimelineBar>& row = rowFor(rank, in.lane);
    const int index = TimelineRows::row(rank, in.lane);
    m_maxDuration_s[size_t(index)] = std::max(m_maxDuration_s[size_t(index)], bar.end_s - bar.start_s);
    m_latest_s = std::max(m_latest_s, bar.end_s);
    // Intervals arrive almost sorted (a step's lanes in order); insert where they belong if not.
    if (row.empty() || row.back().start_s <= bar.start_s) {
      row.push_back(std::move(bar));
    } else {
      auto at = std::upper_bound(row.begin(), row.end(), bar.start_s,
                                 [](double t, const TimelineBar& b) { return t < b.start_s; });
      row.insert(at, std::move(bar));
    }
    ++m_barCount;
  }
  m_lastStep_s = step.step_ms / 1000.0;
  m_latest_s = std::max(m_latest_s, seconds(step.end_us));
}

std::vector<TimelineBar>& TimelineData::rowFor(int rank, protocol::Lane lane) {
  return m_bars[size_t(TimelineRows::row(rank, lane))];
}

const std::vector<TimelineBar>& TimelineData::row(int index) const {
  static const std::vector<TimelineBar> empty;
  return index >= 0 && size_t(index) < m_bars.size() ? m_bars[size_t(index)] : empty;
}

void TimelineData::clear() { *this = TimelineData(); }

double TimelineData::typicalStepDuration_s() const {
  if (m_recentSteps_s.empty()) return m_lastStep_s;
  std::vector<double> v = m_recentSteps_s;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::pair<size_t, size_t> TimelineData::visible(int index, double t0_s, double t1_s) const {
  const auto& r = row(index);
  if (r.empty()) return {0, 0};
  const double maxDur = m_maxDuration_s[size_t(index)];
  auto cmp = [](const TimelineBar& b, double t) { return b.start_s < t; };
  const auto first = std::lower_bound(r.begin(), r.end(), t0_s - maxDur, cmp);
  const auto last =
      std::upper_bound(first, r.end(), t1_s, [](double t, const TimelineBar& b) { return t < b.start_s; });
  return {size_t(first - r.begin()), size_t(last - r.begin())};
}

std::optional<TimelineHit> TimelineData::hit(int rowIndex, double t_s, double tolerance_s) const {
  const auto [first, last] = visible(rowIndex, t_s - tolerance_s, t_s + tolerance_s);
  const auto& r = row(rowIndex);
  std::optional<TimelineHit> best;
  double bestDistance = tolerance_s;
  for (size_t i = first; i < last; ++i) {
    const TimelineBar& b = r[i];
    const double distance = t_s < b.start_s ? b.start_s - t_s : (t_s > b.end_s ? t_s - b.end_s : 0.0);
    if (distance <= bestDistance) {
      bestDistance = distance;
      best = TimelineHit{TimelineRows::rankOf(rowIndex), TimelineRows::laneOf(rowIndex), b};
      if (distance == 0.0) break;
    }
  }
  return best;
}

QString describe_hit(const TimelineHit& hit) {
  const TimelineBar& b = hit.bar;
  const QLocale locale;
  QString text =
      QStringLiteral("<b>%1</b>%2<br>rank %3, %4 lane, step %5<br>%6 ms, from %7 s")
          .arg(phase_name(b.phase).toHtmlEscaped(),
               b.label.empty() ? QString()
                               : QStringLiteral(" (%1)").arg(QString::fromStdString(b.label).toHtmlEscaped()))
          .arg(hit.rank)
          .arg(lane_name(hit.lane))
          .arg(b.step)
          .arg(locale.toString((b.end_s - b.start_s) * 1e3, 'f', 3), locale.toString(b.start_s, 'f', 4));
  if (protocol::is_gpu_idle(b.phase)) text += QStringLiteral("<br>") + idle_explanation(b.phase, b.label).toHtmlEscaped();
  if (b.bytes > 0) text += QStringLiteral("<br>%1 MiB").arg(locale.toString(double(b.bytes) / (1 << 20), 'f', 1));
  if (b.busbw_gbps > 0) text += QStringLiteral(", bus bandwidth %1 GB/s").arg(locale.toString(b.busbw_gbps, 'f', 1));
  return text;
}

}  // namespace tunebench::ui
