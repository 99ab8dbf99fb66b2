#include "ui/plots/timeline_range_summary.h"

#include <algorithm>
#include <map>
#include <set>

namespace tunebench::ui {

RangeSummary summarize_range(const TimelineData& data, double t0_s, double t1_s, const std::vector<int>& rows) {
  RangeSummary out;
  out.t0_s = std::min(t0_s, t1_s);
  out.t1_s = std::max(t0_s, t1_s);
  std::map<protocol::Phase, PhaseSummary> byPhase;
  std::set<int> ranks;
  for (int row : rows) {
    ranks.insert(TimelineRows::rankOf(row));
    const auto& bars = data.row(row);
    const auto [first, last] = data.visible(row, out.t0_s, out.t1_s);
    for (size_t i = first; i < last; ++i) {
      const TimelineBar& b = bars[i];
      const double inside = std::min(b.end_s, out.t1_s) - std::max(b.start_s, out.t0_s);
      if (inside <= 0 && !(b.start_s >= out.t0_s && b.start_s <= out.t1_s)) continue;
      PhaseSummary& p = byPhase[b.phase];
      p.phase = b.phase;
      ++p.count;
      p.total_s += std::max(0.0, inside);
    }
  }
  out.ranks = int(ranks.size());
  const double capacity = (out.t1_s - out.t0_s) * std::max(1, out.ranks);
  for (auto& [phase, p] : byPhase) {
    p.mean_s = p.count ? p.total_s / p.count : 0.0;
    p.share = capacity > 0 ? p.total_s / capacity : 0.0;
    out.phases.push_back(p);
  }
  std::sort(out.phases.begin(), out.phases.end(),
            [](const PhaseSummary& a, const PhaseSummary& b) { return a.total_s > b.total_s; });
  return out;
}

}  // namespace tunebench::ui
