// The step time of a trial, defined once (core/metrics/step_time.h: a step's time is its slowest
// rank's; the worker's own summary computes from there too).
//
// The trial's step time is the spread of metrics::step_times_ms over the measured (non-warm-up)
// steps. TrialMetrics::step_ms, the comparison, the
// diagnosis, `tunebench-cli list` and the trials table all use this; no one takes rank 0's median.
// It needs only each rank's step windows, so a store load without intervals is enough.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/analysis/statistics.h"
#include "core/metrics/step_time.h"
#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

// The trial's step time: the spread of metrics::step_times_ms over its measured steps.
Spread trial_step_ms(const protocol::TrialLog& log);

// One point per step index, warm-up included, for curves against the step (the comparison's
// Curves tab, the HTML report): the step's time as above (its slowest rank's), the mean loss of
// the ranks that sent it, and whether any rank flagged it warm-up.
struct StepPoint {
  int64_t step = 0;
  double ms = 0.0;
  double loss = 0.0;
  bool warmup = false;
};
std::vector<StepPoint> step_curve(const protocol::TrialLog& log);

}  // namespace tunebench::analysis
