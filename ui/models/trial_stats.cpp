#include "ui/models/trial_stats.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/step_time.h"
#include "core/analysis/throughput.h"

namespace tunebench::ui {

void TrialStats::add(const EventBatch& batch) {
  for (const auto& e : batch) {
    m_worldSize = std::max(m_worldSize, e.header.rank + 1);
    if (e.is<protocol::Hello>()) {
      m_worldSize = std::max(m_worldSize, e.as<protocol::Hello>().world_size);
      m_steps.ranks[e.header.rank].hello = e.as<protocol::Hello>();  // the config: tokens a step carries
    }
    if (!e.is<protocol::Step>()) continue;
    const auto& s = e.as<protocol::Step>();
    if (s.warmup) continue;
    protocol::Step window = s;
    window.intervals.clear();
    m_steps.ranks[e.header.rank].steps.push_back(std::move(window));
  }
}

void TrialStats::clear() { *this = TrialStats(); }

double TrialStats::stepMsMedian() const {
  const analysis::Spread step = analysis::trial_step_ms(m_steps);
  return step.empty() ? std::nan("") : step.median;
}

double TrialStats::tokensPerSecond() const {
  const analysis::Spread rate = analysis::trial_tokens_per_s(m_steps);
  return rate.empty() ? std::nan("") : rate.median;
}

}  // namespace tunebench::ui
