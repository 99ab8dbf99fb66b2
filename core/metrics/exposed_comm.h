// Exposed communication of one step: the time some collective is in flight on the comm lane while
// no compute-lane interval runs, in µs. Overlapping collectives count once (union). On a
// kernel-sampled step the compute lane holds only the time compute kernels ran (gpu_activity.h),
// so this is "collective time not overlapped by compute kernels"; its GPU-idle gaps are not compute.
//
// The worker puts it in every step event (Step::exposed_comm_ms) and the analysis' phase
// breakdown must agree with it (tests/core/analysis/phase_breakdown_test.cpp checks that).
#pragma once

#include <cstdint>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::metrics {

int64_t exposed_comm_us(const std::vector<protocol::Interval>& intervals);
// Union of the comm-lane intervals (time any collective is in flight), in µs.
int64_t comm_union_us(const std::vector<protocol::Interval>& intervals);

}  // namespace tunebench::metrics
