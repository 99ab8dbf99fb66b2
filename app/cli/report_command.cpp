// `tunebench-cli report INPUTS... [--trials A,B] [--baseline N] [--format text|json|markdown|html]
// [--html FILE | -o FILE]`: argument wiring only. Text and JSON are core/analysis/report.h, the
// Markdown summary and the self-contained HTML report core/report/report.h; the GUI calls the same.
//
// Inputs are event logs (.jsonl; a file holding several trial ids is split into one trial per id)
// and session files (.tbsession, opened read-only): app/cli/trial_inputs.h reads both.
#include "app/cli/report_command.h"

#include "app/cli/report_wrap.h"
#include "app/cli/trial_inputs.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/analysis/report.h"
#include "core/protocol/trial_log.h"
#include "core/report/report.h"

namespace tunebench::cli {

namespace {

namespace tp = tunebench::protocol;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string trials;  // SESSION --trials A,B (store seam)
  int baseline = -1;
  bool json = false;
  bool wide = false;   // as rendered, however long the lines
  size_t width = 100;  // else fitted to this many columns
  std::string format = "text";
  std::string html;    // --html FILE: the HTML report into FILE
  std::string output;  // -o FILE (default: stdout)
  std::string title;
  bool no_embed = false;
};

// Markdown or HTML (core/report) into the output file or stdout.
void write_shared_report(const ReportOptions& o, report::ReportFormat format, const std::string& output) {
  const auto trials = read_loaded_trial_inputs(o.inputs, o.trials);
  if (trials.empty()) throw std::runtime_error("no trials with steps in " + join(o.inputs));
  report::ReportOptions options;
  options.title = o.title;
  if (o.baseline >= 0) options.baseline = static_cast<size_t>(o.baseline);
  options.embed_session = !o.no_embed;
  if (output.empty() || output == "-") {
    report::write_report(trials, format, std::cout, options);
    return;
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write " + output);
  try {
    report::write_report(trials, format, file, options);
    file.close();
    if (!file) throw std::runtime_error("writing " + output + " failed (disk full?)");
  } catch (...) {
    file.close();
    std::remove(output.c_str());  // no half report left behind
    throw;
  }
  std::cerr << "wrote " << output << " (" << trials.size() << (trials.size() == 1 ? " trial" : " trials") << ")\n";
}

void run_report(const ReportOptions& o) {
  std::string format = o.json ? "json" : o.format;
  std::string output = o.output;
  if (!o.html.empty()) {
    format = "html";
    output = o.html;
  }
  if (const auto shared = report::report_format_from_string(format)) {
    write_shared_report(o, *shared, output);
    return;
  }
  if (!output.empty() && output != "-")
    throw CLI::ValidationError("report", "-o is for --format markdown or html; text and JSON go to stdout");
  std::vector<std::string> names;  // display names: a session's trial names, else none (run ids)
  std::vector<tp::TrialLog> logs = read_trial_inputs(o.inputs, o.trials, &names);
  if (!o.trials.empty() &&
      std::none_of(o.inputs.begin(), o.inputs.end(), [](const std::string& p) { return ends_with(p, ".tbsession"); }))
    std::cerr << "note: --trials selects trials of a session; with event logs every trial is reported\n";
  if (logs.empty()) throw std::runtime_error("no trials with steps in " + join(o.inputs));
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
  cmd->add_option("inputs", opts->inputs, "Session files (.tbsession) and event logs (.jsonl)")
      ->required();
  cmd->add_option("--trials", opts->trials, "With a SESSION: comma-separated trial ids");
  cmd->add_option("--baseline", opts->baseline,
                  "Index of the baseline among the (pooled) trials; default: the single-GPU trial");
  cmd->add_flag("--json", opts->json, "Print JSON instead of text (as --format json)");
  cmd->add_option("--format", opts->format,
                  "text | json | markdown (a summary for a GitHub issue or forum post, at most 60 lines) | html "
                  "(one self-contained file that carries the trials)")
      ->check(CLI::IsMember({"text", "json", "markdown", "md", "html"}));
  cmd->add_option("--html", opts->html, "Write the HTML report to this file (as --format html -o FILE)");
  cmd->add_option("-o,--output", opts->output, "Markdown or HTML into this file instead of stdout");
  cmd->add_option("--title", opts->title, "Markdown and HTML: the report's title (default: the trials' names)");
  cmd->add_flag("--no-embed", opts->no_embed,
                "HTML: leave the trials out (smaller; the file can then not be opened in Tunebench)");
  cmd->add_flag("--wide", opts->wide, "Do not fit the text to the terminal: one line per table row and sentence");
  cmd->add_option("--width", opts->width, "Columns the text is fitted to (default 100)")->check(CLI::Range(40, 1000));
  // Failures reach main(): one prefix ("tunebench-cli: ") and one status per mistake.
  cmd->callback([opts] { run_report(*opts); });
}

}  // namespace tunebench::cli
