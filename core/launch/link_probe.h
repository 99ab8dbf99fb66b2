// The link probe as a trial: the one definition of what a probe runs and what it is called, for
// the GUI's "Measure the link…" and `tunebench-cli probe`. The probe's ranks start like any
// trial's (launch_plan.h, with LaunchContext::link_probe set), so a probe runs wherever the
// trial it is for would run: here, over SSH or under SLURM.
#pragma once

#include <string>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"

namespace tunebench::launch {

// The probe's configuration for the ranks of `trial`: its world size, device, NCCL variables,
// timeouts and Where knobs (launcher, hosts, SLURM), strategy ddp (the ranks need a communicator),
// and the defaults for the rest (the worker builds no model in probe mode). Named by
// link_probe_name().
config::TrialConfig link_probe_config(const config::TrialConfig& trial);

// "link probe, 2 x cpu" and ", NAME=value" for each NCCL variable: the trial's name in a session.
std::string link_probe_name(const config::TrialConfig& probe);

// How many message sizes the probe measures (fp32 elements; metrics::probe_sizes).
int link_probe_points(const LinkProbeRange& range);

}  // namespace tunebench::launch
