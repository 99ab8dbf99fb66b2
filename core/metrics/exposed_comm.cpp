#include "core/metrics/exposed_comm.h"

#include "core/metrics/spans.h"

namespace tunebench::metrics {
namespace {

// The spans of one lane; GPU-idle gaps (compute lane of sampled steps) are not work.
std::vector<Span> lane_spans(const std::vector<protocol::Interval>& intervals, protocol::Lane lane) {
  std::vector<Span> out;
  for (const auto& in : intervals)
    if (in.lane == lane && !protocol::is_gpu_idle(in.phase)) out.push_back({in.start_us, in.end_us});
  return out;
}

}  // namespace

int64_t exposed_comm_us(const std::vector<protocol::Interval>& intervals) {
  return uncovered_us(lane_spans(intervals, protocol::Lane::Comm), lane_spans(intervals, protocol::Lane::Compute));
}

int64_t comm_union_us(const std::vector<protocol::Interval>& intervals) {
  return covered_us(lane_spans(intervals, protocol::Lane::Comm));
}

}  // namespace tunebench::metrics
