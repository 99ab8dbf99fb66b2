// The throughput of a trial, defined once (as its step time is, step_time.h; the formulas are
// core/metrics/step_time.h's, which the worker's own summary uses too).
//
// Tokens per second of all ranks together: the tokens one step carries on every rank (the median
// over measured steps; a step without a token count takes the config's micro_batch x seq_len x
// grad_accum when those are known) over the trial's step time (trial_step_ms: per step the slowest
// rank). Per GPU (per rank) it is that over the world size. Its quartiles come from the step
// time's (tokens / t decreases in t). TrialMetrics, the trials table (the live row and a stored
// row), the comparison, reports, the worker's own summary (one rank's steps) and the diagnosis
// all use these, so a trial reads the same everywhere; nobody sums per-rank figures.
#pragma once

#include <cstdint>

#include "core/analysis/statistics.h"
#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

// The rate's spread from a step time's (n, quartiles, mean and extremes of tokens / t).
Spread throughput_of(const Spread& step_ms, double tokens);

// micro_batch x seq_len x grad_accum of the log's config when all three are known, else 0 (of a
// config JSON: the same for a hello's config, which the live plots read).
int64_t configured_tokens_per_rank_step(const protocol::TrialLog& log);
int64_t configured_tokens_per_rank_step(const nlohmann::json& config);
// samples_per_step of the log's config when it is known (a known setting of an imported trace),
// else 0. A model whose batches are not token sequences (a CNN) has its throughput in samples/s:
// all ranks' samples per step over the same step time, as tokens (TrialMetrics::samples_per_s_*).
int64_t configured_samples_per_rank_step(const protocol::TrialLog& log);
int64_t configured_samples_per_rank_step(const nlohmann::json& config);
// All ranks' tokens per step: the median over measured steps (0: unknown).
double trial_tokens_per_step(const protocol::TrialLog& log);
// The trial's throughput, all ranks together (n = 0 when the tokens or the steps are unknown).
Spread trial_tokens_per_s(const protocol::TrialLog& log);
// The same in samples, for a model without tokens (a CNN) given samples_per_step: all ranks'
// samples per step (median over measured steps) and over the step time (TrialMetrics'
// samples_per_s_total for one run).
double trial_samples_per_step(const protocol::TrialLog& log);
Spread trial_samples_per_s(const protocol::TrialLog& log);

}  // namespace tunebench::analysis
