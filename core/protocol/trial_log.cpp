#include "core/protocol/trial_log.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tunebench::protocol {
namespace {

// True when `steps` already holds step index `index`. Steps arrive in order, so the common case
// is one comparison with the last.
bool has_step(const std::vector<Step>& steps, int64_t index) {
  if (steps.empty() || steps.back().step < index) return false;
  return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.step == index; });
}

template <class Listener>
void read_file(const std::string& path, Listener& listener) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  EventReader reader(listener);
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) reader.feed(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  // A directory opens but cannot be read: that is not an empty log.
  if (in.bad()) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  reader.finish();
}

}  // namespace

void TrialLog::add(const Event& event) {
  if (trial.empty()) trial = event.header.trial;
  RankLog& r = ranks[event.header.rank];
  const int64_t t = event.header.t_us;
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, Hello>) r.hello = p;
        else if constexpr (std::is_same_v<T, ModelInfo>) r.model = p;
        else if constexpr (std::is_same_v<T, Step>) {
          if (!has_step(r.steps, p.step)) {
            r.steps.push_back(p);
          } else {
            add_problem({ReadProblem::Kind::DuplicateStep,
                         0,
                         "rank " + std::to_string(event.header.rank) + " sent step " + std::to_string(p.step) +
                             " twice; the first is kept",
                         {}});
          }
        } else if constexpr (std::is_same_v<T, GpuSample>)
          r.samples.push_back({t, p});
        else if constexpr (std::is_same_v<T, Log>) r.logs.push_back({t, p});
        else if constexpr (std::is_same_v<T, Warning>) r.warnings.push_back({t, p});
        else if constexpr (std::is_same_v<T, Error>) r.errors.push_back({t, p});
        else if constexpr (std::is_same_v<T, Done>) r.done = p;
        else if constexpr (std::is_same_v<T, LinkProbe>) r.probes.push_back(p);
      },
      event.payload);
}

void TrialLog::add_problem(const ReadProblem& problem) {
  if (problem.kind == ReadProblem::Kind::Omitted) {  // a stored count of problems not kept
    problem_count += std::max<int64_t>(0, std::atoll(problem.excerpt.c_str()));
    return;
  }
  if (problem.kind != ReadProblem::Kind::NewerVersion) ++problem_count;
  if (problems.size() < kMaxKeptProblems) problems.push_back(problem);
}

int TrialLog::world_size() const {
  for (const auto& [rank, r] : ranks)
    if (r.hello) return r.hello->world_size;
  return static_cast<int>(ranks.size());
}

int64_t TrialLog::steps_per_rank() const {
  size_t most = 0;
  for (const auto& [rank, r] : ranks) most = std::max(most, r.steps.size());
  return static_cast<int64_t>(most);
}

nlohmann::json TrialLog::config() const {
  for (const auto& [rank, r] : ranks)
    if (r.hello) return r.hello->config;
  return nullptr;
}

std::vector<const Step*> TrialLog::measured_steps(int rank) const {
  std::vector<const Step*> out;
  auto it = ranks.find(rank);
  if (it == ranks.end()) return out;
  for (const auto& s : it->second.steps)
    if (!s.warmup) out.push_back(&s);
  return out;
}

void TrialSplitter::on_event(Event&& event) {
  const std::string& id = event.header.trial;
  auto it = m_logs.find(id);
  if (it == m_logs.end()) {
    m_order.push_back(id);
    it = m_logs.emplace(id, TrialLog{}).first;
  }
  it->second.add(event);
}

std::vector<TrialLog> TrialSplitter::take() {
  std::vector<TrialLog> out;
  for (const auto& id : m_order) out.push_back(std::move(m_logs[id]));
  if (out.empty()) out.emplace_back();
  out.front().problems.insert(out.front().problems.begin(), m_problems.problems.begin(), m_problems.problems.end());
  out.front().problems.resize(std::min(out.front().problems.size(), TrialLog::kMaxKeptProblems));
  out.front().problem_count += m_problems.problem_count;
  m_logs.clear();
  m_order.clear();
  m_problems = TrialLog{};
  return out;
}

std::vector<TrialLog> read_trial_logs_file(const std::string& path) {
  TrialSplitter splitter;
  read_file(path, splitter);
  return splitter.take();
}

TrialLog read_trial_log_file(const std::string& path) {
  TrialLog log;
  TrialLogBuilder builder(log);
  read_file(path, builder);
  return log;
}

}  // namespace tunebench::protocol
