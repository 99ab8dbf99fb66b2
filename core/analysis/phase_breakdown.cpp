#include "core/analysis/phase_breakdown.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/metrics/spans.h"
#include "core/metrics/step_time.h"

namespace tunebench::analysis {

using protocol::Lane;
using protocol::Phase;

namespace {

using metrics::covered_us;
using metrics::Span;

// Slots in priority order: the lowest active slot owns the instant.
enum Slot {
  kBackward,
  kForward,
  kOptimizer,
  kOtherCompute,
  kComm,
  kDataWait,
  kH2d,
  kHostOptimizer,
  kSyncWait,
  kDependencyWait,
  kLaunchGap,
  kHostWait,
  kSlotCount
};

constexpr Part kSlotPart[kSlotCount] = {Part::Backward,  Part::Forward,      Part::Optimizer, Part::OtherCompute,
                                        Part::ExposedComm, Part::DataWait,   Part::HostToDevice, Part::Optimizer,
                                        Part::SyncWait,  Part::DependencyWait, Part::LaunchGap, Part::HostWait};

int slot_of(const protocol::Interval& in) {
  switch (in.lane) {
    case Lane::Compute:
      switch (in.phase) {
        case Phase::Backward:
        case Phase::Recompute:
          return kBackward;
        case Phase::Forward:
          return kForward;
        case Phase::Optimizer:
          return kOptimizer;
        case Phase::SyncWait:
          return kSyncWait;
        case Phase::DependencyWait:
          return kDependencyWait;
        case Phase::LaunchGap:
          return kLaunchGap;
        case Phase::HostWait:
          return kHostWait;
        default:
          return kOtherCompute;
      }
    case Lane::Comm:
      return kComm;
    case Lane::Host:
      switch (in.phase) {
        case Phase::DataWait:
          return kDataWait;
        case Phase::HostToDevice:
          return kH2d;
        case Phase::Optimizer:
          return kHostOptimizer;
        default:
          return -1;  // other host activity does not occupy the device: idle
      }
  }
  return -1;
}

struct Edge {
  int64_t t_us;
  int slot;
  int delta;
};

}  // namespace

std::string_view to_string(Part part) {
  static constexpr std::string_view names[kPartCount] = {
      "data_wait",    "h2d",       "forward",    "backward",  "optimizer", "other_compute",
      "exposed_comm", "host_wait", "launch_gap", "sync_wait", "dependency_wait", "idle"};
  return names[static_cast<size_t>(part)];
}

std::string_view label(Part part) {
  static constexpr std::string_view names[kPartCount] = {"data wait",
                                                         "host-to-device",
                                                         "forward",
                                                         "backward",
                                                         "optimizer",
                                                         "other compute",
                                                         "exposed communication",
                                                         "GPU idle: host wait",
                                                         "GPU idle: launch gaps",
                                                         "GPU idle: sync",
                                                         "GPU idle: dependency wait",
                                                         "idle"};
  return names[static_cast<size_t>(part)];
}

bool is_idle(Part part) { return std::find(kIdleParts.begin(), kIdleParts.end(), part) != kIdleParts.end(); }

PhaseBreakdown breakdown_of(const protocol::Step& step) {
  PhaseBreakdown b;
  b.step_us = metrics::step_duration_us(step);
  b.gpu_sampled = step.gpu_sampled;
  b.gpu_busy_us = step.gpu_sampled ? static_cast<int64_t>(std::llround(step.gpu_busy_ms * 1000.0)) : 0;
  // Steps without a window (timing off) have no intervals to place: all idle.
  const bool has_window = step.end_us > step.start_us;
  const Span window{step.start_us, step.end_us};

  std::vector<Edge> edges;
  std::vector<Span> comm, recompute, compute;
  if (has_window) {
    for (const auto& in : step.intervals) {
      const int slot = slot_of(in);
      const Span s{std::max(in.start_us, window.start_us), std::min(in.end_us, window.end_us)};
      if (slot < 0 || s.length_us() == 0) continue;
      edges.push_back({s.start_us, slot, +1});
      edges.push_back({s.end_us, slot, -1});
      if (slot == kComm) comm.push_back(s);
      if (slot <= kOtherCompute) compute.push_back(s);
      if (in.lane == Lane::Compute && in.phase == Phase::Recompute) recompute.push_back(s);
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& c) { return a.t_us < c.t_us; });

  std::array<int, kSlotCount> active{};
  int64_t prev = window.start_us;
  auto attribute = [&](int64_t until) {
    if (until <= prev) return;
    Part part = Part::Idle;
    for (int s = 0; s < kSlotCount; ++s)
      if (active[static_cast<size_t>(s)] > 0) {
        part = kSlotPart[s];
        break;
      }
    b[part] += until - prev;
    prev = until;
  };
  for (size_t i = 0; i < edges.size();) {
    attribute(edges[i].t_us);
    const int64_t t = edges[i].t_us;
    for (; i < edges.size() && edges[i].t_us == t; ++i)
      active[static_cast<size_t>(edges[i].slot)] += edges[i].delta;
  }
  if (has_window)
    attribute(window.end_us);
  else
    b[Part::Idle] = b.step_us;

  b.comm_us = covered_us(comm);
  b.recompute_us = covered_us(recompute);
  b.compute_us = covered_us(compute);
  return b;
}

}  // namespace tunebench::analysis
