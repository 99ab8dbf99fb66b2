// SM activity, SM occupancy and tensor-core activity of a trial (NVML GPM, GpuCounters of the `gpu`
// samples), defined once: the mean of the samples taken while measured steps ran, over every
// rank's GPU. Where no sample has them, the reason the worker gave (its `gpm` warning: not Hopper,
// no permission, counters held by another profiler) or that none was given.
#pragma once

#include <optional>
#include <string>

#include "core/protocol/trial_log.h"

namespace tunebench::metrics {

struct TrialActivity {
  std::optional<double> sm_activity_pct;     // share of time the SMs were busy
  std::optional<double> sm_occupancy_pct;    // resident warps against the maximum
  std::optional<double> tensor_activity_pct; // any tensor pipe active
  int64_t samples = 0;                       // samples with SM activity inside measured steps
  std::string problem;                       // why there is none; empty when there is
};

TrialActivity trial_activity(const protocol::TrialLog& log);

}  // namespace tunebench::metrics
