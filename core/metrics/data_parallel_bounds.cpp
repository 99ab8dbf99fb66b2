#include "core/metrics/data_parallel_bounds.h"

#include <algorithm>
#include <cmath>

namespace tunebench::metrics {

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

}  // namespace tunebench::metrics
