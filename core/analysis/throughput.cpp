#include "core/analysis/throughput.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/analysis/step_time.h"
#include "core/config/known_settings.h"
#include "core/config/trial_config.h"
#include "core/metrics/percentile.h"
#include "core/metrics/step_time.h"

namespace tunebench::analysis {

Spread throughput_of(const Spread& step_ms, double tokens) {
  Spread s;
  if (step_ms.n == 0 || step_ms.min <= 0 || tokens <= 0) return s;
  s.n = step_ms.n;
  s.median = metrics::tokens_per_second(tokens, step_ms.median);
  s.p25 = metrics::tokens_per_second(tokens, step_ms.p75);
  s.p75 = metrics::tokens_per_second(tokens, step_ms.p25);
  s.mean = metrics::tokens_per_second(tokens, step_ms.mean);  // the rate of the mean step: total work / total time
  s.min = metrics::tokens_per_second(tokens, step_ms.max);
  s.max = metrics::tokens_per_second(tokens, step_ms.min);
  return s;
}

int64_t configured_tokens_per_rank_step(const nlohmann::json& cfg) {
  if (!cfg.is_object()) return 0;
  for (const char* key : {"micro_batch", "seq_len", "grad_accum"})
    if (!config::is_known(cfg, key)) return 0;
  return config::from_json(cfg).config.tokens_per_rank_step();
}
int64_t configured_tokens_per_rank_step(const protocol::TrialLog& log) {
  return configured_tokens_per_rank_step(log.config());
}

int64_t configured_samples_per_rank_step(const nlohmann::json& cfg) {
  if (!cfg.is_object() || !config::is_known(cfg, "samples_per_step")) return 0;
  return std::max<int64_t>(0, config::from_json(cfg).config.samples_per_step);
}
int64_t configured_samples_per_rank_step(const protocol::TrialLog& log) {
  return configured_samples_per_rank_step(log.config());
}

double trial_tokens_per_step(const protocol::TrialLog& log) {
  return metrics::tokens_per_step(log, configured_tokens_per_rank_step(log));
}

Spread trial_tokens_per_s(const protocol::TrialLog& log) {
  return throughput_of(trial_step_ms(log), trial_tokens_per_step(log));
}

double trial_samples_per_step(const protocol::TrialLog& log) {
  const int64_t per_rank = configured_samples_per_rank_step(log);
  if (per_rank <= 0) return 0.0;
  std::map<int64_t, int> ranks_in_step;  // as TrialMetrics counts them: the ranks that ran the step
  for (const auto& [rank, r] : log.ranks)
    for (const protocol::Step* s : log.measured_steps(rank)) ++ranks_in_step[s->step];
  std::vector<double> samples;
  for (const auto& [index, ranks] : ranks_in_step) samples.push_back(static_cast<double>(per_rank) * ranks);
  return metrics::percentile(std::move(samples), 0.5);
}

Spread trial_samples_per_s(const protocol::TrialLog& log) {
  return throughput_of(trial_step_ms(log), trial_samples_per_step(log));
}

}  // namespace tunebench::analysis
