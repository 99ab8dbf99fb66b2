#include "app/cli/trial_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "core/protocol/trial_log.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"

namespace tunebench::cli {

namespace {

namespace tp = tunebench::protocol;

// A probe trial records no steps; its points are what it is for.
bool has_probe(const store::SessionStore& session, int64_t id) {
  const auto log = session.load_trial(id).log;
  for (const auto& [rank, r] : log.ranks)
    if (!r.probes.empty()) return true;
  return false;
}

// One TrialLog per trial id (protocol::TrialSplitter); lines that were not events go to stderr
// (the newer-version notice is no bad line). Logs without any event are dropped.
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
// every trial that recorded steps. The session is opened read-only: a report changes nothing.
std::vector<store::LoadedTrial> read_session(const std::string& path, const std::string& selection) {
  store::SessionStore::OpenOptions options;
  options.mode = store::SessionStore::Mode::ReadOnly;
  const auto session = store::SessionStore::open(path, options);
  std::vector<std::string> wanted;
  std::stringstream ss(selection);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.push_back(item);
  std::vector<store::LoadedTrial> trials;
  const auto all = session.list_trials();
  // Every trial asked for must be there: a selection never shrinks silently (--trials 1,99).
  for (const auto& w : wanted)
    if (std::none_of(all.begin(), all.end(),
                     [&](const store::TrialInfo& t) { return w == t.name || w == std::to_string(t.id); }))
      throw std::runtime_error(path + " has no trial " + w + " (tunebench-cli list " + path + " shows its trials)");
  for (const auto& info : all) {
    const bool selected = wanted.empty() ? info.step_count > 0 || has_probe(session, info.id)
                                         : std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
                                             return w == info.name || w == std::to_string(info.id);
                                           });
    if (!selected) continue;
    auto loaded = session.load_trial(info.id);
    if (loaded.log.trial.empty()) loaded.log.trial = info.name;
    trials.push_back(std::move(loaded));
  }
  return trials;
}

}  // namespace

void require_files(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    struct stat st {};
    if (!path.empty() && ::stat(path.c_str(), &st) != 0)
      throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
}

std::vector<store::LoadedTrial> read_loaded_trial_inputs(const std::vector<std::string>& paths,
                                                         const std::string& selection) {
  require_files(paths);
  std::vector<store::LoadedTrial> trials;
  for (const auto& path : paths) {
    if (ends_with(path, ".tbsession")) {
      for (auto& t : read_session(path, selection)) trials.push_back(std::move(t));
      continue;
    }
    for (auto& log : read_logs(path)) {
      store::LoadedTrial t;
      t.info.run_id = log.trial;
      t.info.config = log.config().is_object() ? log.config() : nlohmann::json::object();
      std::tie(t.info.status, t.info.exit_reason) = store::final_status(log);
      t.info.source = "import: " + path.substr(path.find_last_of('/') + 1);
      t.log = std::move(log);
      trials.push_back(std::move(t));
    }
  }
  return trials;
}

std::vector<tp::TrialLog> read_trial_inputs(const std::vector<std::string>& paths, const std::string& selection,
                                           std::vector<std::string>* names) {
  std::vector<tp::TrialLog> logs;
  std::vector<std::string> display;
  for (auto& t : read_loaded_trial_inputs(paths, selection)) {
    display.push_back(t.info.name);  // an event log names no trial: its run id is used
    logs.push_back(std::move(t.log));
  }
  if (names) *names = std::move(display);
  return logs;
}

}  // namespace tunebench::cli
