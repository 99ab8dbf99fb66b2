// `tunebench-cli report LOG.jsonl... [--json] [--baseline N]`: argument wiring only; the report
// itself is core/analysis/report.h, shared with the GUI.
//
// Inputs are event logs (.jsonl; a file holding several trial ids is split into one trial per id)
// and session files (.tbsession, opened read-only): app/cli/trial_inputs.h reads both.
#include "app/cli/report_command.h"

#include "app/cli/report_wrap.h"
#include "app/cli/trial_inputs.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "core/analysis/report.h"
#include "core/protocol/trial_log.h"

namespace tunebench::cli {

namespace {

namespace tp = tunebench::protocol;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string trials;  // SESSION --trials A,B (store seam)
  int baseline = -1;
  bool json = false;
  bool wide = false;   // as rendered, however long the lines
  size_t width = 100;  // else fitted to this many columns
};

void run_report(const ReportOptions& o) {
  std::vector<std::string> names;  // display names: a session's trial names, else none (run ids)
  std::vector<tp::TrialLog> logs = read_trial_inputs(o.inputs, o.trials, &names);
  if (!o.trials.empty() &&
      std::none_of(o.inputs.begin(), o.inputs.end(), [](const std::string& p) { return ends_with(p, ".tbsession"); }))
    std::cerr << "note: --trials selects trials of a session; with event logs every trial is reported\n";
  if (logs.empty()) throw CLI::ValidationError("report", "no trials found in the inputs");
  std::optional<size_t> baseline;
  if (o.baseline >= 0) baseline = static_cast<size_t>(o.baseline);
  const auto report = analysis::make_report(logs, baseline, names);
  if (o.json)
    std::cout << analysis::render_json(report).dump(2) << "\n";
  else if (o.wide)
    std::cout << analysis::render_text(report);
  else
    std::cout << fit_report(analysis::render_text(report), o.width);
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
  cmd->add_flag("--wide", opts->wide, "Do not fit the text to the terminal: one line per table row and sentence");
  cmd->add_option("--width", opts->width, "Columns the text is fitted to (default 100)")->check(CLI::Range(40, 1000));
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
