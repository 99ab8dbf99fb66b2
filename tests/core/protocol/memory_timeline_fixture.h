// The nine memory-timeline points a CUDA worker sends for one memory-sampled step (start, peak and
// end of the forward, backward and optimizer), in multiples of `unit` bytes: the one synthetic
// timeline the protocol's and the trial view's tests share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::testing {

inline std::vector<protocol::MemoryTimelinePoint> nine_memory_points(int64_t unit) {
  using protocol::MemoryPoint;
  using protocol::Phase;
  return {{Phase::Forward, MemoryPoint::Start, 120, 20 * unit, 30 * unit},
          {Phase::Forward, MemoryPoint::Peak, std::nullopt, 52 * unit, 60 * unit},
          {Phase::Forward, MemoryPoint::End, 90'000, 50 * unit, 60 * unit},
          {Phase::Backward, MemoryPoint::Start, 90'000, 50 * unit, 60 * unit},
          {Phase::Backward, MemoryPoint::Peak, std::nullopt, 58 * unit, 64 * unit},
          {Phase::Backward, MemoryPoint::End, 250'000, 33 * unit, 64 * unit},
          {Phase::Optimizer, MemoryPoint::Start, 250'010, 33 * unit, 64 * unit},
          {Phase::Optimizer, MemoryPoint::Peak, std::nullopt, 36 * unit, 64 * unit},
          {Phase::Optimizer, MemoryPoint::End, 268'000, 20 * unit, 64 * unit}};
}

}  // namespace tunebench::testing
