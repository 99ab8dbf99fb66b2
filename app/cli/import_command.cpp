// `tunebench-cli import SESSION FILE... [--name NAME] [--set key=value]...`: a worker's event log,
// or the per-rank torch.profiler traces of one run, become a trial; a Tunebench HTML report gives
// back the trials it carries. Which one a file is, is read from its content (core/import:
// detect_file_kind, core/report: is_report_file), not its name. A folder stands for the
// torch.profiler traces in it (tensorboard_trace_handler writes one per rank there). The session
// file is created when it does not exist yet, and removed again when that first import fails.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <sys/stat.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "app/cli/commands.h"
#include "app/cli/trial_inputs.h"
#include "core/import/torch_trace_reader.h"
#include "core/import/trace_error.h"
#include "core/import/trace_import.h"
#include "core/report/embedded_session.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

struct ImportArgs {
  std::string session;
  std::vector<std::string> files;
  std::string name;
  std::vector<std::string> settings;
};

std::string size_text(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes >= 1000000 ? "%.1f MB" : "%.1f kB",
                double(bytes) / (bytes >= 1000000 ? 1e6 : 1e3));
  return buf;
}

std::string stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.find_last_of('.'));
}

void import_log(store::SessionStore& store, const ImportArgs& a) {
  if (a.files.size() > 1)
    throw std::runtime_error("an event log holds every rank of a run: import one log at a time (" +
                             std::to_string(a.files.size()) + " given)");
  if (!a.settings.empty())
    throw std::runtime_error(a.files[0] +
                             " is a Tunebench event log, which carries its whole configuration: --set is for "
                             "torch.profiler traces");
  const store::ImportResult result = store::import_event_log(store, a.files[0], a.name);
  for (const int64_t id : result.trial_ids) {  // one per trial id in the log
    const auto trial = store.trial(id);
    std::cout << "imported trial " << trial.id << " '" << trial.name << "' (" << protocol::to_string(trial.status)
              << ")\n";
  }
  std::cout << result.events << " records, " << result.problems << " problems (unreadable lines, duplicate steps)\n";
  for (const auto& p : result.problem_list)
    std::cerr << "  line " << p.line_number << ": " << protocol::to_string(p.kind) << ": " << p.message << "\n";
}

void import_traces(store::SessionStore& store, const ImportArgs& a) {
  import::TraceImportOptions options;
  options.name = a.name;
  options.settings = a.settings;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  int shown = -1;
  if (tty)
    options.progress = [&](int64_t done, int64_t total) {
      const int pct = total > 0 ? static_cast<int>(100 * done / total) : 0;
      if (pct != shown) std::cerr << "\rreading traces: " << pct << " %" << std::flush;
      shown = pct;
      return true;
    };
  const import::TraceImportResult r = import::import_torch_traces(store, a.files, options);
  if (tty) std::cerr << "\r";
  const auto trial = store.trial(r.trial_id);
  std::cout << "imported trial " << trial.id << " '" << trial.name << "' (" << protocol::to_string(trial.status)
            << ") from torch.profiler traces: " << r.ranks << " of " << r.world_size << " ranks, " << r.steps
            << " steps, " << size_text(r.json_bytes) << " of JSON\n";
  for (const auto& w : r.warnings) std::cout << "  note: " << w << "\n";
  if (!r.unknown_knobs.empty()) {
    std::cout << "  unknown settings (" << r.unknown_knobs.size()
              << "), fill in the ones you know with --set key=value "
              << "or `tunebench-cli settings`:";
    for (const auto& k : r.unknown_knobs) std::cout << " " << k;
    std::cout << "\n";
  }
}

void import_reports(store::SessionStore& store, const ImportArgs& a) {
  if (!a.name.empty() || !a.settings.empty())
    throw std::runtime_error("a report carries its trials with their names and settings: --name and --set do not apply");
  for (const auto& f : a.files) {
    const store::ImportResult result = report::import_report(store, f);
    for (const int64_t id : result.trial_ids) {
      const auto trial = store.trial(id);
      std::cout << "imported trial " << trial.id << " '" << trial.name << "' (" << protocol::to_string(trial.status)
                << ")\n";
    }
    std::cout << result.events << " records from " << f << "\n";
  }
}

// A file of a folder is taken as a trace when gzip'd (tensorboard_trace_handler's .json.gz) or
// when its first megabyte names "traceEvents"; a plain JSON beside them (a meta.json) is not.
bool trace_in_folder(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(1u << 20, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
                    static_cast<unsigned char>(head[1]) == 0x8b;
  return gzip || head.find("\"traceEvents\"") != std::string::npos;
}

// The given files, each folder replaced by the torch.profiler traces it holds (other files there,
// such as a meta.json, are left out); a folder without one is refused.
std::vector<std::string> expand_folders(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& path : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> traces;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.is_regular_file(ec) && trace_in_folder(entry.path().string()))
        traces.push_back(entry.path().string());
    if (ec) throw std::runtime_error("cannot read the folder " + path + ": " + ec.message());
    if (traces.empty())
      throw std::runtime_error(path + " is a folder without torch.profiler traces (Chrome-trace JSON with "
                                      "\"traceEvents\", plain or gzip); give the traces or the event log");
    std::sort(traces.begin(), traces.end());
    out.insert(out.end(), traces.begin(), traces.end());
  }
  return out;
}

void run_import(ImportArgs a) {
  require_files(a.files);
  a.files = expand_folders(a.files);
  const bool reports = report::is_report_file(a.files.front());
  for (const auto& f : a.files)
    if (report::is_report_file(f) != reports)
      throw std::runtime_error(a.files.front() + " and " + f +
                               " are of different kinds (a Tunebench report and a log or trace); import them "
                               "separately");
  std::vector<import::FileKind> kinds;
  for (const auto& f : a.files) {
    if (reports) break;
    kinds.push_back(import::detect_file_kind(f));
    if (kinds.back() == import::FileKind::Unknown)
      throw std::runtime_error(f +
                               " is neither a Tunebench event log (JSON lines with a \"type\") nor a torch.profiler "
                               "trace (Chrome-trace JSON with \"traceEvents\", plain or gzip)");
  }
  const bool traces = !reports && kinds.front() == import::FileKind::TorchTrace;
  for (size_t i = 1; i < kinds.size(); ++i)
    if (kinds[i] != kinds.front())
      throw std::runtime_error(a.files[0] + " and " + a.files[i] +
                               " are of different kinds (a torch.profiler trace and an event log); import them "
                               "separately");
  struct stat st {};
  const bool created = ::stat(a.session.c_str(), &st) != 0;
  std::optional<store::SessionStore> store(created ? store::SessionStore::create(a.session, stem(a.session))
                                                   : store::SessionStore::open(a.session));
  try {
    if (reports)
      import_reports(*store, a);
    else if (traces)
      import_traces(*store, a);
    else
      import_log(*store, a);
  } catch (...) {
    if (created) {  // leave no empty session behind a failed first import
      store.reset();
      for (const char* suffix : {"", "-wal", "-shm"}) std::remove((a.session + suffix).c_str());
    }
    throw;
  }
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import a worker event log (.jsonl), or the per-rank torch.profiler traces of one run, as a trial; or the "
      "trials a Tunebench HTML report carries");
  cmd->add_option("session", args->session, "Session file (.tbsession), created if missing")->required();
  cmd->add_option("files", args->files,
                  "Event log written by tunebench-worker (.jsonl), torch.profiler traces (.json, .json.gz), one "
                  "per rank, or their folder, or Tunebench reports (.html)")
      ->required();
  cmd->add_option("--name", args->name, "Trial name (default: the log's trial id, or the traces' folder)");
  cmd->add_option("--set", args->settings,
                  "Traces: a setting of the run that the trace cannot show, key=value with the keys of "
                  "tunebench-worker --help (e.g. --set micro_batch=8 --set seq_len=1024); repeatable")
      ->allow_extra_args(false);
  cmd->callback([args] { run_import(*args); });
}

}  // namespace tunebench::cli
