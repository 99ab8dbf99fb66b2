#include "core/metrics/step_time.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/metrics/percentile.h"

namespace tunebench::metrics {

int64_t step_duration_us(const protocol::Step& step) {
  if (step.end_us > step.start_us) return step.end_us - step.start_us;
  return static_cast<int64_t>(std::llround(step.step_ms * 1000.0));
}

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

int64_t rank_step_tokens(const protocol::Step& step, int64_t configured) {
  return step.tokens > 0 ? step.tokens : configured;
}

double tokens_per_step(const protocol::TrialLog& log, int64_t configured) {
  std::map<int64_t, double> per_step;
  for (const auto& [rank, r] : log.ranks)
    for (const protocol::Step* s : log.measured_steps(rank))
      per_step[s->step] += static_cast<double>(rank_step_tokens(*s, configured));
  std::vector<double> tokens;
  for (const auto& [index, t] : per_step) tokens.push_back(t);
  return percentile(std::move(tokens), 0.5);
}

double tokens_per_second(double tokens, double step_ms) { return step_ms > 0 ? tokens / (step_ms / 1000.0) : 0.0; }

}  // namespace tunebench::metrics
