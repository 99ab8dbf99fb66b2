// The link probe: all-reduce bus bandwidth over a sweep of message sizes on the ranks' real
// transport (NCCL on GPUs, Gloo on the CPU), by the nccl-tests definition.
//
// Each size is all-reduced a few times untimed, then `iterations` times under the communicator's
// own timing (the comm-lane intervals the training step uses: CUDA events on NCCL's stream), and
// the median of those durations is the point. All ranks run the same sizes and counts (rank 0
// decides the count per size from the warm-up and broadcasts it). Deliberately absent: other
// collectives (the predictions derive all-gather and reduce-scatter from the same bus bandwidth).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/ATen.h>

#include "core/engine/comm/communicator.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

class DeviceContext;

struct LinkProbeOptions {
  int64_t min_bytes = int64_t{1} << 20;  // first size (doubling up to max_bytes)
  int64_t max_bytes = int64_t{1} << 30;
  at::ScalarType dtype = at::kFloat;
  int warmup = 3;                 // untimed all-reduces per size
  int max_iterations = 20;        // timed all-reduces per size, at most
  double seconds_per_size = 1.0;  // fewer iterations for sizes slower than this budget (at least 3)
};

// The sizes a probe visits: min_bytes doubling up to max_bytes, rounded to whole elements.
std::vector<int64_t> probe_sizes(const LinkProbeOptions& options);

// Runs the sweep; `point` receives each size's result as soon as it is measured. Collective on
// every rank of `comm`. Throws EngineError on communication failures.
void probe_all_reduce(Communicator& comm, const DeviceContext& device, const LinkProbeOptions& options,
                      const std::function<void(protocol::LinkProbe)>& point);

}  // namespace tunebench::engine
