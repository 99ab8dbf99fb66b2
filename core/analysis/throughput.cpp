#include "core/analysis/throughput.h"

#include <map>

#include "core/analysis/step_time.h"
#include "core/config/known_settings.h"
#include "core/config/trial_config.h"

namespace tunebench::analysis {

double tokens_per_second(double tokens, double step_ms) { return step_ms > 0 ? tokens / (step_ms / 1000.0) : 0.0; }

Spread throughput_of(const Spread& step_ms, double tokens) {
  Spread s;
  if (step_ms.n == 0 || step_ms.min <= 0 || tokens <= 0) return s;
  s.n = step_ms.n;
  s.median = tokens_per_second(tokens, step_ms.median);
  s.p25 = tokens_per_second(tokens, step_ms.p75);
  s.p75 = tokens_per_second(tokens, step_ms.p25);
  s.mean = tokens_per_second(tokens, step_ms.mean);  // the rate of the mean step: total work / total time
  s.min = tokens_per_second(tokens, step_ms.max);
  s.max = tokens_per_second(tokens, step_ms.min);
  return s;
}

int64_t rank_step_tokens(const protocol::Step& step, int64_t configured) {
  return step.tokens > 0 ? step.tokens : configured;
}

int64_t configured_tokens_per_rank_step(const protocol::TrialLog& log) {
  const auto cfg = log.config();
  if (!cfg.is_object()) return 0;
  for (const char* key : {"micro_batch", "seq_len", "grad_accum"})
    if (!config::is_known(cfg, key)) return 0;
  return config::from_json(cfg).config.tokens_per_rank_step();
}

double trial_tokens_per_step(const protocol::TrialLog& log) {
  const int64_t configured = configured_tokens_per_rank_step(log);
  std::map<int64_t, double> per_step;
  for (const auto& [rank, r] : log.ranks)
    for (const protocol::Step* s : log.measured_steps(rank))
      per_step[s->step] += static_cast<double>(rank_step_tokens(*s, configured));
  std::vector<double> tokens;
  for (const auto& [index, t] : per_step) tokens.push_back(t);
  return spread_of(std::move(tokens)).median;
}

Spread trial_tokens_per_s(const protocol::TrialLog& log) {
  return throughput_of(trial_step_ms(log), trial_tokens_per_step(log));
}

}  // namespace tunebench::analysis
