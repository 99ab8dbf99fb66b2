// `tunebench-cli export SESSION [--trial ID]... --format csv|json|chrome-trace -o FILE`: the
// formats of report::export_trials (the GUI's exports call it too). Several trials go into one
// Chrome trace, one under another. The session is opened read-only: exporting never changes it.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "core/report/export.h"
#include "core/store/export.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"

namespace tunebench::cli {
namespace {

struct ExportArgs {
  std::string session;
  std::vector<int64_t> trials;  // empty: every trial
  std::string format;
  std::string table = "steps";
  std::string output;
};

store::ExportFormat format_of(const ExportArgs& a) {
  if (a.format == "csv")
    return a.table == "summaries" ? store::ExportFormat::SummariesCsv : store::ExportFormat::StepsCsv;
  return a.format == "json" ? store::ExportFormat::Json : store::ExportFormat::ChromeTrace;
}

void run_export(const ExportArgs& a) {
  auto store = store::SessionStore::open(a.session, {store::SessionStore::Mode::ReadOnly});
  std::vector<int64_t> ids = a.trials;
  if (ids.empty())
    for (const auto& t : store.list_trials()) ids.push_back(t.id);
  std::vector<store::LoadedTrial> trials;
  for (int64_t id : ids) trials.push_back(store.load_trial(id));

  std::ofstream file;
  if (a.output != "-") {
    file.open(a.output, std::ios::binary | std::ios::trunc);
    if (!file) throw store::StoreError("cannot write " + a.output);
  }
  try {
    report::export_trials(trials, format_of(a), a.output == "-" ? std::cout : file);
  } catch (const store::StoreError& e) {
    throw store::StoreError("writing " + a.output + " failed: " + e.what());
  }
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "Export trials to CSV, JSON or a Chrome trace");
  cmd->add_option("session", args->session, "Session file (.tbsession)")->required();
  cmd->add_option("--trial", args->trials, "Trial id (repeatable, in the order given; default: all trials)");
  cmd->add_option("--format", args->format, "csv | json | chrome-trace")
      ->required()
      ->check(CLI::IsMember({"csv", "json", "chrome-trace"}));
  cmd->add_option("--table", args->table, "CSV table: steps (per-step records) | summaries")
      ->check(CLI::IsMember({"steps", "summaries"}));
  cmd->add_option("-o,--output", args->output, "Output file, - for stdout")->required();
  cmd->callback([args] { run_export(*args); });
}

}  // namespace tunebench::cli
