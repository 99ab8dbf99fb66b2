// The worker's command line: every TrialConfig knob as --<key-with-dashes>, plus the event
// channel and a few actions. Parsing never exits the process itself; problems are returned so
// the worker can report them as a `config` error event.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::worker {

struct WorkerOptions {
  config::TrialConfig config;
  std::vector<config::Problem> problems;  // command line and config-file problems (not validation)
  std::vector<std::string> warnings;      // --hf-config: fields the model cannot express, by name
  std::string events = "stdout";          // file:PATH | unix:PATH | tcp://HOST:PORT | stdout
  std::string event_token;                // tcp:// only: the trial's token, sent as the first line
  std::string trial;                      // trial id stamped on every event
  bool print_config = false;
  std::string save_params;  // write the final parameters (float32, flat, all units) here (tests)
  bool help_shown = false;  // --help/--list-presets printed; exit 0
  // --probe-link: measure all-reduce bus bandwidth between the ranks instead of training
  // (app/worker/link_probe.h); sizes from probe_min_mb doubling to probe_max_mb.
  bool probe_link = false;
  double probe_min_mb = 1.0;
  double probe_max_mb = 1024.0;
  std::string probe_dtype = "fp32";
  int exit_code = 0;        // non-zero when the command line itself could not be parsed
};

WorkerOptions parse_worker_options(int argc, char** argv);

// "micro_batch" -> "micro-batch"
std::string flag_name(const std::string& key);

}  // namespace tunebench::worker
