#include "core/launch/link_probe.h"

#include "core/metrics/bus_bandwidth.h"

namespace tunebench::launch {

config::TrialConfig link_probe_config(const config::TrialConfig& trial) {
  config::TrialConfig p;
  p.world_size = trial.world_size;
  p.device = trial.device;
  p.strategy = config::Strategy::Ddp;
  p.nccl_env = trial.nccl_env;
  p.rendezvous_timeout_s = trial.rendezvous_timeout_s;
  p.collective_timeout_s = trial.collective_timeout_s;
  // Where the ranks run: every knob of the form's Where group, whatever the launcher needs.
  for (const auto& k : config::knobs())
    if (k.group == "Where") config::set_knob(p, k.key, config::knob_text(trial, k.key));
  p.name = link_probe_name(p);
  return p;
}

std::string link_probe_name(const config::TrialConfig& probe) {
  std::string name = "link probe, " + std::to_string(probe.world_size) + " x " + std::string(config::to_string(probe.device));
  for (const auto& [k, v] : probe.nccl_env) name += ", " + k + "=" + v;
  return name;
}

int link_probe_points(const LinkProbeRange& range) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return static_cast<int>(metrics::probe_sizes(static_cast<int64_t>(range.min_mb * kMiB),
                                               static_cast<int64_t>(range.max_mb * kMiB), 4)
                              .size());
}

}  // namespace tunebench::launch
