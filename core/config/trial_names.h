// The names trials go by when the user gave none of their own: unique in the session and saying
// what the trial is (model, strategy, ranks, device, and the knobs that differ from the preset it
// came from), so that no two rows, legend entries or comparison titles read the same.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::config {

// "tiny DDP x2 on CPU", "7B FSDP x2 on GPU [micro_batch=2, checkpointing=false]": the trial in a
// line. `reference` is the config it was made from; the training knobs that differ from it are
// listed (run length and where it runs are left out), at most three, then "…".
std::string describe_trial(const TrialConfig& config, const TrialConfig& reference);

// The name to queue `config` under: its own, unless it is empty or still the name of a preset the
// config no longer is (the form keeps a preset's name while its knobs are edited); then the
// description against that preset (or the defaults).
std::string default_trial_name(const TrialConfig& config);

// `name`, or "name #2", "name #3", ... when `taken` has it already.
std::string unique_trial_name(const std::string& name, const std::vector<std::string>& taken);

}  // namespace tunebench::config
