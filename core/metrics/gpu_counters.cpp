#include "core/metrics/gpu_counters.h"

#include <algorithm>

namespace tunebench::metrics {

TrialActivity trial_activity(const protocol::TrialLog& log) {
  TrialActivity a;
  double sm = 0, occupancy = 0, tensor = 0;
  int64_t n_occupancy = 0, n_tensor = 0;
  std::string reason;
  for (const auto& [rank, r] : log.ranks) {
    for (const auto& w : r.warnings)
      if (w.value.kind == "gpm" && reason.empty()) reason = "rank " + std::to_string(rank) + ": " + w.value.message;
    // The rank's measured window: first measured start to last measured end.
    int64_t lo = 0, hi = -1;
    for (const auto& s : r.steps)
      if (!s.warmup) {
        lo = hi < lo ? s.start_us : std::min(lo, s.start_us);
        hi = std::max(hi, s.end_us);
      }
    for (const auto& s : r.samples) {
      if (s.t_us < lo || s.t_us > hi) continue;
      const auto& c = s.value.counters;
      if (c.sm_activity_pct) {
        sm += *c.sm_activity_pct;
        ++a.samples;
      }
      if (c.sm_occupancy_pct) {
        occupancy += *c.sm_occupancy_pct;
        ++n_occupancy;
      }
      if (c.tensor_activity_pct) {
        tensor += *c.tensor_activity_pct;
        ++n_tensor;
      }
    }
  }
  if (a.samples > 0) a.sm_activity_pct = sm / static_cast<double>(a.samples);
  if (n_occupancy > 0) a.sm_occupancy_pct = occupancy / static_cast<double>(n_occupancy);
  if (n_tensor > 0) a.tensor_activity_pct = tensor / static_cast<double>(n_tensor);
  if (a.samples == 0)
    a.problem = !reason.empty() ? reason
                                : "no SM activity samples during the measured steps (NVML GPM: a GPU's telemetry of "
                                  "Hopper or newer, two samples apart)";
  return a;
}

}  // namespace tunebench::metrics
