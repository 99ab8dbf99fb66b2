// Where the time of one step went, on one rank: parts that add up to the step time exactly.
//
// Convention (docs/ANALYSIS.md, "Phase breakdown"): every microsecond of the step window
// [Step::start_us, Step::end_us) is given to exactly one part, by priority of what was running:
//   1. compute lane: backward (Backward and Recompute), then forward, optimizer, other compute;
//   2. comm lane: exposed communication (a collective with no compute interval beside it);
//   3. host lane: data wait, then host-to-device, then host optimizer time (counted as optimizer);
//   4. GPU-idle gaps (kernel-sampled steps, metrics/gpu_activity.h): sync wait, dependency wait, launch
//      gaps, host wait;
//   5. nothing: idle (a step without kernel samples: the gaps between its phases).
// The device is the critical path: while a kernel runs, host activity costs nothing, and a
// collective overlapped by compute is hidden. On a kernel-sampled step the compute lane holds only
// the time compute kernels ran, so a forward of 2 ms with 0.3 ms of kernels gives forward 0.3 ms
// and 1.7 ms of GPU idle. Intervals are clipped to the step window.
// This file does not aggregate over steps or ranks (trial_metrics does).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/protocol/events.h"

namespace tunebench::analysis {

enum class Part {
  DataWait,
  HostToDevice,
  Forward,
  Backward,
  Optimizer,
  OtherCompute,
  ExposedComm,
  HostWait,   // GPU idle: the host had not issued the next work
  LaunchGap,  // GPU idle: between back-to-back kernels already issued
  SyncWait,   // GPU idle: the host was blocked in a synchronisation
  DependencyWait,  // GPU idle: queued work held by another stream, a collective or a copy
  Idle,       // nothing recorded (no kernel samples: the gaps between phases)
};
inline constexpr size_t kPartCount = 12;
inline constexpr std::array<Part, kPartCount> kAllParts = {
    Part::DataWait,    Part::HostToDevice, Part::Forward,   Part::Backward, Part::Optimizer,      Part::OtherCompute,
    Part::ExposedComm, Part::HostWait,     Part::LaunchGap, Part::SyncWait, Part::DependencyWait, Part::Idle};
// The parts in which the GPU ran nothing and nothing else explains it (host wait, launch gaps,
// sync wait, unattributed idle): what "host-bound" is about. A dependency wait is not among them:
// the device's queue was full, and what held it is another stream's, a collective's or a copy's.
inline constexpr std::array<Part, 4> kIdleParts = {Part::HostWait, Part::LaunchGap, Part::SyncWait, Part::Idle};

std::string_view to_string(Part part);  // JSON key: "data_wait", "h2d", ..., "host_wait", ..., "idle"
std::string_view label(Part part);      // words: "data wait", "host-to-device", ...
bool is_idle(Part part);                // one of kIdleParts

struct PhaseBreakdown {
  std::array<int64_t, kPartCount> part_us{};  // indexed by Part; sums to step_us exactly
  int64_t step_us = 0;                        // end_us - start_us of the step
  int64_t comm_us = 0;                        // union of collective intervals (time any collective is in flight)
  int64_t recompute_us = 0;                   // union of Recompute intervals; already inside part Backward
  int64_t compute_us = 0;                     // union of compute-lane intervals (GPU-idle gaps excluded)
  bool gpu_sampled = false;                   // the step's kernel intervals were recorded
  int64_t gpu_busy_us = 0;                    // union of its kernel/memcpy/memset intervals (sampled only)

  int64_t& operator[](Part p) { return part_us[static_cast<size_t>(p)]; }
  int64_t operator[](Part p) const { return part_us[static_cast<size_t>(p)]; }
  int64_t exposed_comm_us() const { return (*this)[Part::ExposedComm]; }
};

// Its step_us is metrics::step_duration_us (core/metrics/step_time.h).
PhaseBreakdown breakdown_of(const protocol::Step& step);

}  // namespace tunebench::analysis
