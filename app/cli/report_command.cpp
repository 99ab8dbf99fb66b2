// `tunebench-cli report LOG.jsonl... [--json] [--baseline N]`: argument wiring only; the report
// itself is core/analysis/report.h, shared with the GUI.
//
// Inputs are event logs (.jsonl); a file holding several trials (events with different trial ids)
// is split into one trial per id. Session files (.tbsession) need the store, which lives on
// the session store (read-only) for .tbsession inputs.
#include "app/cli/report_command.h"

#include "app/cli/report_wrap.h"

#include "core/store/session_store.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "core/analysis/report.h"
#include "core/protocol/event_reader.h"
#include "core/protocol/trial_log.h"

namespace tunebench::cli {

namespace {

namespace tp = tunebench::protocol;

// Routes events to one TrialLog per trial id, in order of first appearance.
class TrialSplitter final : public tp::ReadListener {
 public:
  void on_event(tp::Event&& event) override { log_for(event.header.trial).add(event); }
  void on_problem(const tp::ReadProblem& problem) override { m_problems.push_back(problem); }
  std::vector<tp::TrialLog> take() {
    std::vector<tp::TrialLog> out;
    for (const auto& id : m_order) out.push_back(std::move(m_logs[id]));
    return out;
  }
  const std::vector<tp::ReadProblem>& problems() const { return m_problems; }

 private:
  tp::TrialLog& log_for(const std::string& id) {
    if (!m_logs.count(id)) m_order.push_back(id);
    return m_logs[id];
  }
  std::map<std::string, tp::TrialLog> m_logs;
  std::vector<std::string> m_order;
  std::vector<tp::ReadProblem> m_problems;  // lines that were not events, for stderr
};

std::vector<tp::TrialLog> read_logs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  TrialSplitter splitter;
  tp::EventReader reader(splitter);
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) reader.feed(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  reader.finish();
  for (const auto& p : splitter.problems()) std::cerr << path << ":" << p.line_number << ": " << p.message << "\n";
  return splitter.take();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Trials of a session file: those named in `selection` (ids or names, comma-separated), else
// every trial that recorded steps. The session is opened read-only: a report changes nothing.
std::vector<tp::TrialLog> read_session(const std::string& path, const std::string& selection) {
  store::SessionStore::OpenOptions options;
  options.mode = store::SessionStore::Mode::ReadOnly;
  const auto session = store::SessionStore::open(path, options);
  std::vector<std::string> wanted;
  std::stringstream ss(selection);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.push_back(item);
  std::vector<tp::TrialLog> logs;
  for (const auto& info : session.list_trials()) {
    const bool selected =
        wanted.empty() ? info.step_count > 0 : std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
          return w == info.name || w == std::to_string(info.id);
        });
    if (!selected) continue;
    auto loaded = session.load_trial(info.id);
    if (loaded.log.trial.empty()) loaded.log.trial = info.name;
    logs.push_back(std::move(loaded.log));
  }
  return logs;
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
  std::vector<tp::TrialLog> logs;
  for (const auto& path : o.inputs) {
    if (ends_with(path, ".tbsession")) {
      for (auto& log : read_session(path, o.trials)) logs.push_back(std::move(log));
      continue;
    }
    for (auto& log : read_logs(path)) logs.push_back(std::move(log));
  }
  if (!o.trials.empty() &&
      std::none_of(o.inputs.begin(), o.inputs.end(), [](const std::string& p) { return ends_with(p, ".tbsession"); }))
    std::cerr << "note: --trials selects trials of a session; with event logs every trial is reported\n";
  if (logs.empty()) throw CLI::ValidationError("report", "no trials found in the inputs");
  std::optional<size_t> baseline;
  if (o.baseline >= 0) baseline = static_cast<size_t>(o.baseline);
  const auto report = analysis::make_report(logs, baseline);
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
