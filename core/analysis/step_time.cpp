#include "core/analysis/step_time.h"

#include <algorithm>

namespace tunebench::analysis {

Spread trial_step_ms(const protocol::TrialLog& log) {
  std::vector<double> ms;
  for (const auto& [index, value] : metrics::step_times_ms(log)) ms.push_back(value);
  return spread_of(std::move(ms));
}

std::vector<StepPoint> step_curve(const protocol::TrialLog& log) {
  struct At {
    int64_t us = 0;
    double loss = 0.0;
    int ranks = 0;
    bool warmup = false;
  };
  std::map<int64_t, At> steps;
  for (const auto& [rank, r] : log.ranks)
    for (const protocol::Step& s : r.steps) {
      At& a = steps[s.step];
      a.us = std::max(a.us, metrics::step_duration_us(s));
      a.loss += s.loss;
      ++a.ranks;
      a.warmup = a.warmup || s.warmup;
    }
  std::vector<StepPoint> out;
  out.reserve(steps.size());
  for (const auto& [index, a] : steps)
    out.push_back({index, static_cast<double>(a.us) / 1000.0, a.loss / std::max(1, a.ranks), a.warmup});
  return out;
}

}  // namespace tunebench::analysis
