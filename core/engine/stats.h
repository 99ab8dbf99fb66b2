// Per-step and per-run figures computed on the rank (the GUI's analysis recomputes them from the
// intervals; these travel in the events so a headless log is readable on its own). Every formula
// is core/metrics' (step time and throughput: metrics/step_time.h, which the analysis' trial
// figures use too), so a rank's own figures are the trial's definitions applied to that rank.
#pragma once

#include <vector>

#include "core/protocol/events.h"

namespace tunebench::engine {

// Fills step.comm_ms, step.exposed_comm_ms and step.busbw_gbps (and each collective's busbw)
// from the step's intervals.
void summarise_comm(protocol::Step& step, int world_size);

// Step time (metrics::step_times_ms of this rank's steps: median and quartiles), throughput
// (metrics::tokens_per_step over the median step, metrics::tokens_per_second), MFU
// when `peak_flops` > 0 (else -1), medians of communication, exposed communication and data wait.
protocol::Summary summarise(const std::vector<protocol::Step>& measured, double flops_per_token, double peak_flops,
                            int64_t peak_bytes);

}  // namespace tunebench::engine
