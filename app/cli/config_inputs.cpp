#include "app/cli/config_inputs.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "core/config/hf_config.h"

namespace tunebench::cli {

config::TrialConfig config_from_inputs(const std::string& preset, const std::string& config_file,
                                       const std::vector<std::string>& sets, const std::string& hf_config) {
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
  // A preset's name describes the preset ("125m single GPU, bf16"): once --set changes it, the
  // name says so, unless --set gives a name.
  std::string changed;
  bool named = false;
  for (const auto& kv : sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::runtime_error("--set wants KEY=VALUE, got '" + kv + "'");
    const std::string key = kv.substr(0, eq);
    if (auto problem = config::set_knob(c, key, kv.substr(eq + 1)))
      throw std::runtime_error(problem->key + ": " + problem->message);
    if (key == "name") named = true;
    else changed += (changed.empty() ? "" : " ") + key + "=" + config::knob_text(c, key);
  }
  if (!named && !changed.empty() && !c.name.empty()) c.name += " + " + changed;
  return c;
}

}  // namespace tunebench::cli
