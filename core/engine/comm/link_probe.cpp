#include "core/engine/comm/link_probe.h"

#include <algorithm>
#include <cmath>

#include "core/engine/device.h"
#include "core/engine/stats.h"
#include "core/engine/timing/timeline.h"
#include "core/metrics/bus_bandwidth.h"
#include "core/metrics/percentile.h"

namespace tunebench::engine {

namespace {

const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16:
      return "bf16";
    case at::kHalf:
      return "fp16";
    default:
      return "fp32";
  }
}

}  // namespace

std::vector<int64_t> probe_sizes(const LinkProbeOptions& o) {
  return metrics::probe_sizes(o.min_bytes, o.max_bytes, static_cast<int64_t>(c10::elementSize(o.dtype)));
}

void probe_all_reduce(Communicator& comm, const DeviceContext& device, const LinkProbeOptions& o,
                      const std::function<void(protocol::LinkProbe)>& point) {
  const int n = comm.size();
  const auto opts = at::TensorOptions().device(device.device()).dtype(o.dtype);
  const int64_t elem = static_cast<int64_t>(c10::elementSize(o.dtype));
  Timeline timeline(device.is_cuda(), true);
  for (const int64_t bytes : probe_sizes(o)) {
    at::Tensor buffer = at::ones({bytes / elem}, opts);
    // Warm-up, untimed; its wall time sizes the timed loop.
    comm.set_timeline(nullptr);
    const int64_t t0 = protocol::now_us();
    for (int i = 0; i < o.warmup; ++i) comm.all_reduce_avg(buffer, "probe warm-up")->wait();
    device.synchronize();
    const double each_s = static_cast<double>(protocol::now_us() - t0) * 1e-6 / std::max(1, o.warmup);
    at::Tensor count =
        at::full({1},
                 static_cast<float>(
                     std::clamp(static_cast<int>(o.seconds_per_size / std::max(each_s, 1e-9)), 3, o.max_iterations)),
                 at::TensorOptions().device(device.device()).dtype(at::kFloat));
    comm.broadcast(count);  // every rank runs rank 0's count
    const int iterations = static_cast<int>(std::lround(count.item<float>()));

    comm.set_timeline(&timeline);
    for (int i = 0; i < iterations; ++i) comm.all_reduce_avg(buffer, "probe")->wait();
    timeline.mark_step_end();
    device.synchronize();
    std::vector<double> us;
    for (const auto& in : timeline.collect(protocol::now_us()))
      if (in.lane == protocol::Lane::Comm && in.phase == protocol::Phase::AllReduce)
        us.push_back(static_cast<double>(in.duration_us()));
    comm.set_timeline(nullptr);
    if (us.empty()) continue;

    protocol::LinkProbe p;
    p.collective = protocol::Phase::AllReduce;
    p.dtype = dtype_name(o.dtype);
    p.bytes = bytes;
    p.world_size = n;
    p.iterations = static_cast<int>(us.size());
    p.time_us = std::max(1.0, metrics::percentile(us, 0.5));
    p.algbw_gbps = static_cast<double>(bytes) / (p.time_us * 1e-6) / 1e9;
    p.busbw_gbps = p.algbw_gbps * metrics::bus_factor(protocol::Phase::AllReduce, n);  // nccl-tests' busbw
    point(p);
  }
}

}  // namespace tunebench::engine
