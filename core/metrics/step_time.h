// A trial's step time and its throughput, defined once: the analysis (trial_step_ms,
// trial_tokens_per_s and every view built on them) and the worker's own done summary (one rank's
// steps) compute them from here.
//
// A step's time is its window (end_us - start_us; step_ms where a step has no window). Ranks are
// aligned by step index and a step takes its slowest rank's time: synchronised ranks end a step
// together, so that is the wall time it took on the critical path. Tokens per step are all ranks'
// tokens of a step (a rank's own count, else the configured micro_batch x seq_len x grad_accum),
// the median over measured steps; the rate is those tokens over a step time.
#pragma once

#include <cstdint>
#include <map>

#include "core/protocol/trial_log.h"

namespace tunebench::metrics {

// One rank's step time in microseconds.
int64_t step_duration_us(const protocol::Step& step);
// Step index -> that step's time in ms (slowest rank), over measured steps, in step order.
std::map<int64_t, double> step_times_ms(const protocol::TrialLog& log);

// Tokens one rank's step carries: its own count, else `configured` (0: unknown).
int64_t rank_step_tokens(const protocol::Step& step, int64_t configured_tokens_per_rank_step);
// All ranks' tokens per step: the median over measured steps (0: unknown).
double tokens_per_step(const protocol::TrialLog& log, int64_t configured_tokens_per_rank_step);
// The rate: `tokens` per step in steps of `step_ms`; 0 when the step time is not positive.
double tokens_per_second(double tokens, double step_ms);

}  // namespace tunebench::metrics
