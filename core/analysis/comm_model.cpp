#include "core/analysis/comm_model.h"

#include <algorithm>
#include <cmath>

namespace tunebench::analysis {

double bus_factor(protocol::Phase collective, int n) {
  if (n < 2) return 0.0;
  const double nd = static_cast<double>(n);
  switch (collective) {
    case protocol::Phase::AllReduce:
      return 2.0 * (nd - 1.0) / nd;
    case protocol::Phase::AllGather:
    case protocol::Phase::ReduceScatter:
      return (nd - 1.0) / nd;
    case protocol::Phase::Broadcast:
      return 1.0;
    default:
      return 0.0;
  }
}

double bus_bandwidth_gbps(protocol::Phase collective, int64_t bytes, int64_t duration_us, int n) {
  if (duration_us <= 0) return 0.0;
  const double algbw = static_cast<double>(bytes) / (static_cast<double>(duration_us) * 1e-6) / 1e9;
  return algbw * bus_factor(collective, n);
}

double comm_floor_ms(double bus_bytes, double busbw_gbps) {
  if (busbw_gbps <= 0) return 0.0;
  return bus_bytes / (busbw_gbps * 1e9) * 1e3;
}

double exposed_comm_lower_bound_ms(double floor_ms, double overlappable_ms) {
  return std::max(0.0, floor_ms - std::max(0.0, overlappable_ms));
}

DataParallelBounds data_parallel_bounds(int world_size, double compute_ms, double floor_ms, double backward_ms) {
  DataParallelBounds b;
  const double n = static_cast<double>(world_size);
  b.exposed_min_ms = exposed_comm_lower_bound_ms(floor_ms, backward_ms);
  if (compute_ms <= 0) return b;
  b.speedup_no_overlap = n * compute_ms / (compute_ms + floor_ms);
  b.speedup_full_overlap = n * compute_ms / (compute_ms + b.exposed_min_ms);
  // k C / (k C + F) >= 0.9  <=>  k >= 9 F / C
  b.accum_for_90pct = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(9.0 * floor_ms / compute_ms - 1e-9)));
  return b;
}

}  // namespace tunebench::analysis
