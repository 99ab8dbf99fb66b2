#include "ui/models/trial_stats.h"

#include <algorithm>
#include <cmath>

namespace tunebench::ui {

void TrialStats::add(const EventBatch& batch) {
  for (const auto& e : batch) {
    m_worldSize = std::max(m_worldSize, e.header.rank + 1);
    if (e.is<protocol::Hello>()) m_worldSize = std::max(m_worldSize, e.as<protocol::Hello>().world_size);
    if (e.header.rank != 0 || !e.is<protocol::Step>()) continue;
    const auto& s = e.as<protocol::Step>();
    if (s.warmup) continue;
    m_stepMs.push_back(s.step_ms);
    m_tokensPerStep = s.tokens;
  }
}

void TrialStats::clear() { *this = TrialStats(); }

double TrialStats::stepMsMedian() const {
  if (m_stepMs.empty()) return std::nan("");
  std::vector<double> v = m_stepMs;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (upper + *std::max_element(v.begin(), v.begin() + long(mid))) / 2.0;
}

double TrialStats::tokensPerSecond() const {
  const double ms = stepMsMedian();
  if (!(ms > 0)) return std::nan("");
  return double(m_worldSize) * double(m_tokensPerStep) / (ms / 1000.0);
}

}  // namespace tunebench::ui
