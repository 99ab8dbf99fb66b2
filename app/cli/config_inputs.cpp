#include "app/cli/config_inputs.h"

#include "app/cli/commands.h"
#include "app/cli/trial_inputs.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "core/config/hf_config.h"
#include "core/config/script.h"
#include "core/launch/launch_plan.h"

namespace tunebench::cli {

namespace {
std::vector<std::string>& trailing() {
  static std::vector<std::string> arguments;
  return arguments;
}
}  // namespace

void set_trailing_arguments(std::vector<std::string> arguments) { trailing() = std::move(arguments); }
const std::vector<std::string>& trailing_arguments() { return trailing(); }

void add_script_options(CLI::App* cmd, ScriptInputs* in) {
  auto* script = cmd->add_option("--script", in->script,
                                 "Your own PyTorch training script, run unmodified under tunebench_probe in every rank "
                                 "(its arguments after --; docs/SCRIPTS.md)");
  cmd->add_option("--python", in->python, "The interpreter for --script (default: the first python3 that imports torch)")
      ->needs(script);
  cmd->add_option("--nproc", in->nproc, "Ranks of --script on this machine (default 1)")
      ->needs(script)
      ->check(CLI::Range(1, 1024));
  cmd->footer("After --, the script's arguments; {knob} is filled in with the knob's value, e.g. -- --batch-size "
              "{micro_batch} (docs/SCRIPTS.md).");
}

config::TrialConfig config_from_inputs(const std::string& preset, const std::string& config_file,
                                       const std::vector<std::string>& sets, const std::string& hf_config,
                                       const ScriptInputs& script) {
  require_files({config_file, hf_config});
  config::TrialConfig c;
  if (!preset.empty()) {
    const auto p = config::trial_preset(preset);
    if (!p) {
      std::string names;
      for (const auto& t : config::trial_presets()) names += " " + t.name;
      throw std::runtime_error("unknown preset '" + preset + "'; presets:" + names);
    }
    c = *p;
  }
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) throw std::runtime_error("cannot open " + config_file);
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(config_file + " is not JSON: " + e.what());
    }
    const auto parsed = config::from_json(j, c);
    if (!parsed.ok()) throw std::runtime_error(config_file + ":\n" + config::describe(parsed.problems));
    c = parsed.config;
  }
  if (!hf_config.empty()) {
    const auto hf = config::read_hf_config_file(hf_config);
    if (!hf.model) throw std::runtime_error(config::describe(hf.problems));
    for (const auto& w : hf.model->warnings) std::cerr << "warning: " << hf_config << ": " << w << "\n";
    config::apply_hf_model(c, *hf.model);
    if (c.name.empty() || !preset.empty()) c.name = hf.model->preset == "custom" ? hf_config : hf.model->preset;
  }
  if (!script.script.empty()) {
    std::error_code ec;
    c.script = std::filesystem::absolute(script.script, ec).lexically_normal().string();
    if (!std::filesystem::is_regular_file(c.script, ec)) throw std::runtime_error("no script " + c.script);
    if (!script.python.empty()) c.python = script.python;
    c.world_size = script.nproc > 0 ? script.nproc : 1;
    c.script_args = launch::shell_join(trailing_arguments());
    if (preset.empty() && config_file.empty()) c.name = std::filesystem::path(c.script).filename().string();
  } else if (!trailing_arguments().empty()) {
    throw std::runtime_error("arguments after -- are a script's: give --script FILE");
  }
  // A preset's name describes the preset ("125m single GPU, bf16"): once --set changes it, the
  // name says so, unless --set gives a name.
  std::string changed;
  bool named = false;
  for (const auto& kv : sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::runtime_error("--set wants KEY=VALUE, got '" + kv + "'");
    const std::string key = kv.substr(0, eq);
    if (config::is_script(c) && !config::script_can_set(c, key))
      throw ConfigError(key + ": your script sets it itself; the probe applies num_workers, pin_memory, "
                        "persistent_workers, prefetch_factor, cudnn_benchmark, amp, compile, bucket_mb, "
                        "gradient_as_bucket_view and static_graph, and a knob the arguments name ({" + key + "})");
    if (auto problem = config::set_knob(c, key, kv.substr(eq + 1)))
      throw ConfigError(problem->key + ": " + problem->message);
    if (key == "name") named = true;
    else changed += (changed.empty() ? "" : " ") + key + "=" + config::knob_text(c, key);
  }
  if (!named && !changed.empty() && !c.name.empty()) c.name += " + " + changed;
  return c;
}

}  // namespace tunebench::cli
