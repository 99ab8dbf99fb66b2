#include "core/metrics/bus_bandwidth.h"

namespace tunebench::metrics {

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
  if (duration_us <= 0 || bytes <= 0) return 0.0;
  const double algbw = static_cast<double>(bytes) / (static_cast<double>(duration_us) * 1e-6) / 1e9;
  return algbw * bus_factor(collective, n);
}

double comm_floor_ms(double bus_bytes, double busbw_gbps) {
  if (busbw_gbps <= 0) return 0.0;
  return bus_bytes / (busbw_gbps * 1e9) * 1e3;
}

std::vector<int64_t> probe_sizes(int64_t min_bytes, int64_t max_bytes, int64_t element_bytes) {
  const int64_t elem = element_bytes > 0 ? element_bytes : 1;
  std::vector<int64_t> sizes;
  for (int64_t b = min_bytes > elem ? min_bytes : elem; b <= max_bytes; b *= 2) sizes.push_back(b / elem * elem);
  return sizes;
}

}  // namespace tunebench::metrics
