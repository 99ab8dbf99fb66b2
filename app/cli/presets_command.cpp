// `tunebench-cli presets [--json]`: the model presets with their dims and parameter count, and the
// trial presets with what they run. scripts/pytorch_reference.py --list-presets --json lists its
// presets in the same shape; tests/scripts/reference_presets_test.py holds the two to the same
// dims and parameter counts.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "core/config/trial_config.h"
#include "core/predict/model_shape.h"

namespace tunebench::cli {
namespace {

nlohmann::json presets_json() {
  nlohmann::json models = nlohmann::json::object();
  for (const auto& name : config::model_preset_names()) {
    const auto dims = config::model_preset(name);
    if (!dims) continue;  // "custom": dims given by the user
    config::TrialConfig c;
    c.model = name;
    c.dims = *dims;
    const nlohmann::json full = config::to_json(c);
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& key : config::model_dim_keys()) shape[key] = full.at(key);
    models[name] = {{"dims", shape}, {"params", predict::parameter_count(*dims)}};
  }
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& p : config::trial_presets())
    trials.push_back({{"name", p.name}, {"description", p.description}, {"config", config::to_json(p.config)}});
  return {{"models", models}, {"trials", trials}};
}

void print_presets(bool as_json) {
  const nlohmann::json j = presets_json();
  if (as_json) {
    std::cout << j.dump(1) << "\n";
    return;
  }
  std::cout << "model presets (--set model=NAME):\n";
  for (const auto& [name, m] : j["models"].items()) {
    std::string dims;
    for (const auto& [key, value] : m["dims"].items()) dims += (dims.empty() ? "" : " ") + key + "=" + value.dump();
    std::printf("  %-12s %15s parameters  %s\n", name.c_str(),
                std::to_string(m["params"].get<int64_t>()).c_str(), dims.c_str());
  }
  std::cout << "trial presets (--preset NAME):\n";
  for (const auto& t : j["trials"])
    std::printf("  %-15s %s\n", t["name"].get<std::string>().c_str(), t["description"].get<std::string>().c_str());
  std::fflush(stdout);
}

}  // namespace

void add_presets_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("presets", "List the model presets (dims, parameter count) and the trial presets");
  cmd->add_flag("--json", *as_json, "As JSON: {\"models\": {NAME: {\"dims\", \"params\"}}, \"trials\": [...]}");
  cmd->callback([as_json] { print_presets(*as_json); });
}

}  // namespace tunebench::cli
