// `tunebench-cli settings SESSION --trial ID [key=value]... [--forget KEY]...`: the knob values of a
// trial, known and unknown, and filling in the ones an imported torch.profiler trace could not show
// (core/import: edit_known_settings, validated by config::set_known_setting). Without settings it
// only prints.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/trial_inputs.h"
#include "core/config/known_settings.h"
#include "core/config/trial_config.h"
#include "core/import/trace_import.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

struct SettingsArgs {
  std::string session;
  int64_t trial = 0;
  std::vector<std::string> settings;
  std::vector<std::string> forget;
};

void print(const nlohmann::json& config) {
  const config::TrialConfig values = config::from_json(config).config;
  for (const auto& k : config::knobs()) {
    if (k.key == "name") continue;
    std::cout << "  " << k.key << " = "
              << (config::is_known(config, k.key) ? config::knob_text(values, k.key) : std::string("unknown")) << "\n";
  }
}

void run_settings(const SettingsArgs& a) {
  require_files({a.session});
  auto store = store::SessionStore::open(a.session);
  const auto info = store.trial(a.trial);
  nlohmann::json config = info.config;
  if (!a.settings.empty() || !a.forget.empty())
    config = import::edit_known_settings(store, a.trial, a.settings, a.forget);
  std::cout << "trial " << info.id << " '" << info.name << "' (" << info.source << ")\n";
  print(config);
}

}  // namespace

void add_settings_command(CLI::App& app) {
  auto args = std::make_shared<SettingsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "settings", "Show a trial's settings; fill in those an imported torch.profiler trace could not show");
  cmd->add_option("session", args->session, "Session file (.tbsession)")->required();
  cmd->add_option("--trial", args->trial, "Trial id (tunebench-cli list)")->required();
  cmd->add_option("settings", args->settings, "key=value settings to fill in (keys as in tunebench-worker --help)");
  cmd->add_option("--forget", args->forget, "Make a setting unknown again")->allow_extra_args(false);
  cmd->callback([args] { run_settings(*args); });
}

}  // namespace tunebench::cli
