// `tunebench-cli import SESSION LOG.jsonl [--name NAME]`: a worker's event log becomes a trial.
// The session file is created when it does not exist yet.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sys/stat.h>

#include "app/cli/commands.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

struct ImportArgs {
  std::string session;
  std::string log;
  std::string name;
};

std::string stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.find_last_of('.'));
}

void run_import(const ImportArgs& a) {
  struct stat st {};
  const bool created = ::stat(a.session.c_str(), &st) != 0;
  std::optional<store::SessionStore> store(created ? store::SessionStore::create(a.session, stem(a.session))
                                                   : store::SessionStore::open(a.session));
  store::ImportResult result;
  try {
    result = store::import_event_log(*store, a.log, a.name);
  } catch (...) {
    if (created) {  // leave no empty session behind a failed first import
      store.reset();
      for (const char* suffix : {"", "-wal", "-shm"}) std::remove((a.session + suffix).c_str());
    }
    throw;
  }
  for (const int64_t id : result.trial_ids) {
    const auto trial = store->trial(id);
    std::cout << "imported trial " << trial.id << " '" << trial.name << "' (" << store::to_string(trial.status)
              << ")\n";
  }
  std::cout << result.events << " records, " << result.problems << " problems (unreadable lines, duplicate steps)\n";
  for (const auto& p : result.problem_list)
    std::cerr << "  line " << p.line_number << ": " << protocol::to_string(p.kind) << ": "
              << p.message << "\n";
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand("import", "Import a worker event log (.jsonl) as a trial");
  cmd->add_option("session", args->session, "Session file (.tbsession), created if missing")->required();
  cmd->add_option("log", args->log, "Event log written by tunebench-worker (.jsonl)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--name", args->name, "Trial name (default: the log's trial id)");
  cmd->callback([args] { run_import(*args); });
}

}  // namespace tunebench::cli
