// A trial configuration from the command line: a preset, then a JSON config file over it, then
// --set KEY=VALUE changes. Shared by `predict` and `tune`. Throws std::runtime_error.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::cli {

config::TrialConfig config_from_inputs(const std::string& preset, const std::string& config_file,
                                       const std::vector<std::string>& sets);

}  // namespace tunebench::cli
