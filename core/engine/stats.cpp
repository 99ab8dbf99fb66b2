#include "core/engine/stats.h"

#include <algorithm>

#include "core/metrics/bus_bandwidth.h"
#include "core/metrics/exposed_comm.h"
#include "core/metrics/flops.h"
#include "core/metrics/percentile.h"
#include "core/metrics/step_time.h"

namespace tunebench::engine {

using metrics::percentile;

void summarise_comm(protocol::Step& step, int world_size) {
  double weighted = 0.0;
  int64_t bytes = 0;
  for (auto& in : step.intervals) {
    if (in.lane != protocol::Lane::Comm) continue;
    in.busbw_gbps = metrics::bus_bandwidth_gbps(in.phase, in.bytes, in.duration_us(), world_size);
    weighted += in.busbw_gbps * static_cast<double>(in.bytes);
    bytes += in.bytes;
  }
  // The time any collective is in flight (overlapping ones count once), as the analysis reads a
  // step's communication: summing durations counted FSDP's overlapping gathers twice.
  step.comm_ms = static_cast<double>(metrics::comm_union_us(step.intervals)) / 1000.0;
  step.exposed_comm_ms = static_cast<double>(metrics::exposed_comm_us(step.intervals)) / 1000.0;
  step.busbw_gbps = bytes > 0 ? weighted / static_cast<double>(bytes) : 0.0;
}

protocol::Summary summarise(const std::vector<protocol::Step>& measured, double flops_per_token, double peak_flops,
                            int64_t peak_bytes) {
  protocol::Summary s;
  s.measured_steps = static_cast<int64_t>(measured.size());
  s.peak_bytes = peak_bytes;
  if (measured.empty()) return s;
  std::vector<double> comm_ms, exposed_ms, wait_ms;
  for (const auto& st : measured) {
    comm_ms.push_back(st.comm_ms);
    exposed_ms.push_back(st.exposed_comm_ms);
    double wait = 0;
    for (const auto& in : st.intervals)
      if (in.phase == protocol::Phase::DataWait) wait += static_cast<double>(in.duration_us()) / 1000.0;
    wait_ms.push_back(wait);
  }
  // This rank's step time and throughput, by the trial's definitions applied to its own steps
  // (the analysis' trial_step_ms and trial_tokens_per_s take the same median of the same values).
  protocol::TrialLog own;
  own.ranks[0].steps = measured;
  std::vector<double> step_ms;
  for (const auto& [index, ms] : metrics::step_times_ms(own)) step_ms.push_back(ms);
  s.step_ms_median = percentile(step_ms, 0.5);
  s.step_ms_p25 = percentile(step_ms, 0.25);
  s.step_ms_p75 = percentile(step_ms, 0.75);
  s.tokens_per_s = metrics::tokens_per_second(metrics::tokens_per_step(own, 0), s.step_ms_median);
  // On the wire -1 means unknown (no peak for this device).
  s.mfu = metrics::model_flops_utilisation(s.tokens_per_s, flops_per_token,
                                           peak_flops > 0 ? std::optional<double>(peak_flops / 1e12) : std::nullopt)
              .value_or(-1.0);
  s.comm_ms_median = percentile(comm_ms, 0.5);
  s.exposed_comm_ms_median = percentile(exposed_ms, 0.5);
  s.data_wait_ms_median = percentile(wait_ms, 0.5);
  s.final_loss = measured.back().loss;
  return s;
}

}  // namespace tunebench::engine
