// What a selected stretch of the timeline holds, per phase: total time, mean duration and count of
// the intervals in it (clipped to the range), over the rows shown, as the PyTorch profiler's and
// Nsight's range summaries give. Plain data and a function over TimelineData.
#pragma once

#include <vector>

#include "ui/plots/timeline_data.h"

namespace tunebench::ui {

struct PhaseSummary {
  protocol::Phase phase = protocol::Phase::Other;
  int count = 0;         // intervals that overlap the range
  double total_s = 0.0;  // their time inside the range, summed over ranks
  double mean_s = 0.0;   // total_s / count
  double share = 0.0;    // total_s / (range length x ranks shown)
};

struct RangeSummary {
  double t0_s = 0.0, t1_s = 0.0;
  int ranks = 0;                     // ranks the rows belong to
  std::vector<PhaseSummary> phases;  // by total time, largest first
};

RangeSummary summarize_range(const TimelineData& data, double t0_s, double t1_s, const std::vector<int>& rows);

}  // namespace tunebench::ui
