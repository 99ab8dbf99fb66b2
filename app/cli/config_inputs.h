// A trial configuration from the command line: a preset, then a JSON config file over it, then a
// Hugging Face config.json's model (--hf-config; its unmodelled fields are warned about on
// stderr), then --set KEY=VALUE changes. Shared by `predict`, `run`, `sweep` and `tune`. Throws
// std::runtime_error.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace CLI {
class App;
}

namespace tunebench::cli {

// Your own script as the trial (docs/SCRIPTS.md): --script FILE [--python P] [--nproc N] -- ARGS.
struct ScriptInputs {
  std::string script;  // made absolute
  std::string python;
  int nproc = 0;       // ranks on this machine; 0: one
};
// Adds those options to a command.
void add_script_options(CLI::App* cmd, ScriptInputs* inputs);
// Everything after the command line's first "--": the script's arguments ({knob} filled in).
// main() takes them off before parsing (CLI11 2.1 reads a "--" right after a repeatable option
// as the end of that option only, and the arguments after it as its own).
void set_trailing_arguments(std::vector<std::string> arguments);
const std::vector<std::string>& trailing_arguments();

// Applies the script inputs after the preset, config file and HF config, before --set (so a --set
// of a knob the script can take applies it to the script).
config::TrialConfig config_from_inputs(const std::string& preset, const std::string& config_file,
                                       const std::vector<std::string>& sets, const std::string& hf_config = "",
                                       const ScriptInputs& script = {});

// The --hf-config option's help, one text for every command that has it.
inline constexpr const char* kHfConfigHelp =
    "Model shape from a Hugging Face config.json (hidden_size, num_key_value_heads, tie_word_embeddings, "
    "rope_theta, ...); fields the model cannot express are named in a warning";

}  // namespace tunebench::cli
