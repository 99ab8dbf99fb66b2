// A trial configuration from the command line: a preset, then a JSON config file over it, then a
// Hugging Face config.json's model (--hf-config; its unmodelled fields are warned about on
// stderr), then --set KEY=VALUE changes. Shared by `predict`, `run`, `sweep` and `tune`. Throws
// std::runtime_error.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::cli {

config::TrialConfig config_from_inputs(const std::string& preset, const std::string& config_file,
                                       const std::vector<std::string>& sets, const std::string& hf_config = "");

// The --hf-config option's help, one text for every command that has it.
inline constexpr const char* kHfConfigHelp =
    "Model shape from a Hugging Face config.json (hidden_size, num_key_value_heads, tie_word_embeddings, "
    "rope_theta, ...); fields the model cannot express are named in a warning";

}  // namespace tunebench::cli
