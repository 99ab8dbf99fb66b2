// `tunebench-cli list SESSION`: one line per trial (id, status, steps, name, tags).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

void run_list(const std::string& path) {
  auto store = store::SessionStore::open(path, {store::SessionStore::Mode::ReadOnly});
  const auto info = store.info();
  std::cout << "session '" << info.name << "' (schema " << info.schema_version << ")\n";
  std::printf("%6s  %-11s  %7s  %s\n", "id", "status", "steps", "name");
  std::fflush(stdout);
  for (const auto& t : store.list_trials()) {
    std::string tags;
    for (const auto& tag : t.tags) tags += (tags.empty() ? "  [" : ", ") + tag;
    if (!tags.empty()) tags += "]";
    std::printf("%6lld  %-11s  %7lld  %s%s\n", static_cast<long long>(t.id),
                std::string(store::to_string(t.status)).c_str(),
                static_cast<long long>(t.step_count), t.name.c_str(), tags.c_str());
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("list", "List the trials of a session");
  cmd->add_option("session", *path, "Session file (.tbsession)")->required();
  cmd->callback([path] { run_list(*path); });
}

}  // namespace tunebench::cli
