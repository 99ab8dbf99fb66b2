#include "app/cli/trial_inputs.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/protocol/event_reader.h"
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
    const bool selected = wanted.empty() ? info.step_count > 0 || has_probe(session, info.id)
                                         : std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
                                             return w == info.name || w == std::to_string(info.id);
                                           });
    if (!selected) continue;
    auto loaded = session.load_trial(info.id);
    if (loaded.log.trial.empty()) loaded.log.trial = info.name;
    logs.push_back(std::move(loaded.log));
  }
  return logs;
}

}  // namespace

std::vector<tp::TrialLog> read_trial_inputs(const std::vector<std::string>& paths, const std::string& selection) {
  std::vector<tp::TrialLog> logs;
  for (const auto& path : paths) {
    if (ends_with(path, ".tbsession")) {
      for (auto& log : read_session(path, selection)) logs.push_back(std::move(log));
      continue;
    }
    for (auto& log : read_logs(path)) logs.push_back(std::move(log));
  }
  return logs;
}

}  // namespace tunebench::cli
