#include "core/analysis/step_time.h"

#include <algorithm>

#include "core/analysis/phase_breakdown.h"

namespace tunebench::analysis {

std::map<int64_t, double> step_times_ms(const protocol::TrialLog& log) {
  std::map<int64_t, int64_t> slowest_us;
  for (const auto& [rank, r] : log.ranks)
    for (const protocol::Step* s : log.measured_steps(rank)) {
      int64_t& us = slowest_us[s->step];
      us = std::max(us, step_duration_us(*s));
    }
  std::map<int64_t, double> out;
  for (const auto& [index, us] : slowest_us) out[index] = static_cast<double>(us) / 1000.0;
  return out;
}

Spread trial_step_ms(const protocol::TrialLog& log) {
  std::vector<double> ms;
  for (const auto& [index, value] : step_times_ms(log)) ms.push_back(value);
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
      a.us = std::max(a.us, step_duration_us(s));
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
