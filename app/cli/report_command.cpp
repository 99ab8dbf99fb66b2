// `tunebench-cli report LOG.jsonl... [--json] [--baseline N]`: argument wiring only; the report
// itself is core/analysis/report.h, shared with the GUI.
//
// Inputs are event logs (.jsonl); a file holding several trials (events with different trial ids)
// is split into one trial per id. Session files (.tbsession) need the store, which lives on
// the session store (read-only) for .tbsession inputs.
#include "app/cli/report_command.h"

#include "core/store/session_store.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <algorithm>
#include <map>
#include <sstream>
#include <memory>

#include "core/analysis/report.h"
#include "core/protocol/event_reader.h"
#include "core/protocol/trial_log.h"

namespace tunebench::cli {

namespace {

namespace tp = tunebench::protocol;

// One TrialLog per trial id (protocol::TrialSplitter); lines that were not events go to stderr.
std::vector<tp::TrialLog> read_logs(const std::string& path) {
  auto logs = tp::read_trial_logs_file(path);
  for (const auto& log : logs)
    for (const auto& p : log.problems)
      if (p.kind != tp::ReadProblem::Kind::NewerVersion)
        std::cerr << path << ":" << p.line_number << ": " << p.message << "\n";
  logs.erase(std::remove_if(logs.begin(), logs.end(), [](const tp::TrialLog& l) { return l.ranks.empty(); }),
             logs.end());
  return logs;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Trials of a session file: those named in `selection` (ids or names, comma-separated), else
// every trial that recorded steps, with their names. The session is opened read-only: a report
// changes nothing.
std::vector<tp::TrialLog> read_session(const std::string& path, const std::string& selection,
                                       std::vector<std::string>& names) {
  store::SessionStore::OpenOptions options;
  options.mode = store::SessionStore::Mode::ReadOnly;
  const auto session = store::SessionStore::open(path, options);
  std::vector<std::string> wanted;
  std::stringstream ss(selection);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.push_back(item);
  std::vector<tp::TrialLog> logs;
  for (const auto& info : session.list_trials()) {
    const bool selected = wanted.empty() ? info.step_count > 0
                                         : std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
                                             return w == info.name || w == std::to_string(info.id);
                                           });
    if (!selected) continue;
    auto loaded = session.load_trial(info.id);
    if (loaded.log.trial.empty()) loaded.log.trial = info.name;
    logs.push_back(std::move(loaded.log));
    names.push_back(info.name);
  }
  return logs;
}

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string trials;  // SESSION --trials A,B (store seam)
  int baseline = -1;
  bool json = false;
};

void run_report(const ReportOptions& o) {
  std::vector<tp::TrialLog> logs;
  std::vector<std::string> names;  // display names: a session's trial names, else none (run ids)
  for (const auto& path : o.inputs) {
    if (ends_with(path, ".tbsession")) {
      std::vector<std::string> session_names;
      for (auto& log : read_session(path, o.trials, session_names)) logs.push_back(std::move(log));
      names.insert(names.end(), session_names.begin(), session_names.end());
      continue;
    }
    for (auto& log : read_logs(path)) {
      logs.push_back(std::move(log));
      names.emplace_back();
    }
  }
  if (!o.trials.empty() && std::none_of(o.inputs.begin(), o.inputs.end(),
                                        [](const std::string& p) { return ends_with(p, ".tbsession"); }))
    std::cerr << "note: --trials selects trials of a session; with event logs every trial is reported\n";
  if (logs.empty()) throw CLI::ValidationError("report", "no trials found in the inputs");
  std::optional<size_t> baseline;
  if (o.baseline >= 0) baseline = static_cast<size_t>(o.baseline);
  const auto report = analysis::make_report(logs, baseline, names);
  if (o.json)
    std::cout << analysis::render_json(report).dump(2) << "\n";
  else
    std::cout << analysis::render_text(report);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Compare trials and explain where the step time goes");
  cmd->add_option("inputs", opts->inputs, "Event logs (.jsonl); a SESSION file once the store is built")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--trials", opts->trials, "With a SESSION: comma-separated trial ids");
  cmd->add_option("--baseline", opts->baseline,
                  "Index of the baseline among the (pooled) trials; default: the single-GPU trial");
  cmd->add_flag("--json", opts->json, "Print JSON instead of text");
  cmd->callback([opts] {
    try {
      run_report(*opts);
    } catch (const CLI::Error&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << "report: " << e.what() << "\n";
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace tunebench::cli
