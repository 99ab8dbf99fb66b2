// Made-up but step-shaped events for the fake worker and the UI benchmark: a DDP/FSDP step's
// intervals on the host, compute and comm lanes, telemetry samples and a hello. No training.
#pragma once

#include <string>

#include <unistd.h>

#include "core/config/trial_config.h"
#include "core/metrics/exposed_comm.h"
#include "core/protocol/events.h"

namespace tunebench::fake {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

// One step's intervals laid out like a DDP/FSDP step of `step_us`, starting at `t`.
inline protocol::Step make_step(const config::TrialConfig& c, int rank, int64_t index, int64_t t, int64_t step_us, bool gpu) {
  protocol::Step s;
  s.step = index;
  s.warmup = index < c.warmup;
  s.start_us = t;
  s.end_us = t + step_us;
  s.step_ms = double(step_us) / 1000.0;
  s.tokens = c.tokens_per_rank_step();
  s.loss = 10.4 - 0.05 * double(index) + 0.01 * rank;
  const int64_t jitter = (index * 7919 + rank * 104729) % std::max<int64_t>(1, step_us / 40);
  auto add = [&](Lane lane, Phase phase, int64_t a, int64_t b, std::string label = {}, int64_t bytes = 0) {
    Interval in{lane, phase, t + a, t + b, std::move(label), bytes, 0.0};
    if (bytes > 0 && b > a) in.busbw_gbps = double(bytes) / double(b - a) / 1e3 * (c.world_size > 1 ? 2.0 * (c.world_size - 1) / c.world_size : 1.0);
    s.intervals.push_back(in);
  };
  const int64_t u = step_us;
  add(Lane::Host, Phase::DataWait, 0, u / 25 + jitter);
  add(Lane::Host, Phase::HostToDevice, u / 25 + jitter, u / 20 + jitter);
  const int64_t fwd0 = u / 20 + jitter, fwd1 = u * 35 / 100, bwd1 = u * 88 / 100;
  if (c.strategy == config::Strategy::Fsdp) {
    for (int b = 0; b < 4; ++b) {
      const int64_t a = fwd0 + (fwd1 - fwd0) * b / 4;
      add(Lane::Comm, Phase::AllGather, a, a + (fwd1 - fwd0) / 6, "block " + std::to_string(b), 404750336 / 2);
    }
  }
  add(Lane::Compute, Phase::Forward, fwd0, fwd1);
  if (c.checkpointing) {
    add(Lane::Compute, Phase::Recompute, fwd1, fwd1 + (bwd1 - fwd1) / 4);
    add(Lane::Compute, Phase::Backward, fwd1 + (bwd1 - fwd1) / 4, bwd1);
  } else {
    add(Lane::Compute, Phase::Backward, fwd1, bwd1);
  }
  if (c.strategy == config::Strategy::Ddp) {
    const int buckets = 6;
    for (int b = 0; b < buckets; ++b) {
      const int64_t a = fwd1 + (bwd1 - fwd1) * (b + 1) / (buckets + 1);
      add(Lane::Comm, Phase::AllReduce, a, a + (bwd1 - fwd1) / 9, "bucket " + std::to_string(b), int64_t(c.bucket_mb * (1 << 20)));
    }
  } else if (c.strategy == config::Strategy::Fsdp) {
    for (int b = 0; b < 4; ++b) {
      const int64_t a = fwd1 + (bwd1 - fwd1) * (b + 1) / 5;
      add(Lane::Comm, Phase::ReduceScatter, a, a + (bwd1 - fwd1) / 8, "block " + std::to_string(3 - b), 404750336);
    }
  }
  add(Lane::Compute, Phase::Optimizer, bwd1 + u / 50, u);
  s.comm_ms = double(metrics::comm_union_us(s.intervals)) / 1000.0;  // as the worker reports it
  const int64_t gib = int64_t(1) << 30;
  s.memory.allocated_bytes = gpu ? 60 * gib + rank * gib : 300 << 20;
  s.memory.reserved_bytes = s.memory.allocated_bytes + (gpu ? 8 * gib : 0);
  s.memory.peak_bytes = s.memory.allocated_bytes + (gpu ? 30 * gib : 0);
  if (gpu && c.memory_sampled(index)) {
    // A CUDA worker's memory timeline: activations pile up through the forward and are freed
    // through the backward as the gradients appear; the optimizer's temporaries come and go.
    using protocol::MemoryPoint;
    const int64_t base = 40 * gib + rank * gib, act = 24 * gib, grads = 13 * gib, reserve = base + act + 14 * gib;
    const int64_t opt0 = bwd1 + u / 50;
    s.memory_timeline = {{Phase::Forward, MemoryPoint::Start, fwd0, base, reserve},
                         {Phase::Forward, MemoryPoint::Peak, std::nullopt, base + act + 2 * gib, reserve},
                         {Phase::Forward, MemoryPoint::End, fwd1, base + act, reserve},
                         {Phase::Backward, MemoryPoint::Start, fwd1, base + act, reserve},
                         {Phase::Backward, MemoryPoint::Peak, std::nullopt, base + act + 6 * gib, reserve},
                         {Phase::Backward, MemoryPoint::End, bwd1, base + grads, reserve},
                         {Phase::Optimizer, MemoryPoint::Start, opt0, base + grads, reserve},
                         {Phase::Optimizer, MemoryPoint::Peak, std::nullopt, base + grads + 5 * gib, reserve},
                         {Phase::Optimizer, MemoryPoint::End, u, base + grads, reserve}};
  }
  return s;
}

inline protocol::GpuSample make_sample(int rank, int64_t index, bool gpu) {
  protocol::GpuSample g;
  const double wobble = double((index * 37 + rank * 11) % 17);
  if (gpu) {
    g.index = rank;
    g.util_pct = 80.0 + wobble;
    g.mem_used_bytes = (int64_t(90) << 30) + (int64_t(rank) << 30);
    g.mem_total_bytes = int64_t(143771) << 20;
    g.power_w = 520.0 + 6.0 * wobble;
  } else {
    g.cpu_pct = 90.0 + wobble;
    g.rss_bytes = (int64_t(700) << 20) + (int64_t(rank) << 24);
  }
  return g;
}

inline protocol::Hello make_hello(const config::TrialConfig& c, int rank, bool gpu) {
  protocol::Hello h;
  h.host = "fakehost";
  h.pid = ::getpid();
  h.world_size = c.world_size;
  h.local_rank = rank;
  h.device = gpu ? "NVIDIA H200" : "cpu";
  h.device_kind = gpu ? "cuda" : "cpu";
  h.device_memory_bytes = gpu ? int64_t(143771) << 20 : 0;
  h.torch = "fake";
  h.backend = c.world_size > 1 ? (gpu ? "nccl" : "gloo") : "none";
  h.config = config::to_json(c);
  return h;
}

}  // namespace tunebench::fake
