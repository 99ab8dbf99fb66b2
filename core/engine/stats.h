// Per-step and per-run figures computed on the rank (the GUI's analysis recomputes them from the
// intervals; these travel in the events so a headless log is readable on its own). Every formula
// is core/metrics', shared with the analysis.
#pragma once

#include <vector>

#include "core/protocol/events.h"

namespace tunebench::engine {

// Fills step.comm_ms, step.exposed_comm_ms and step.busbw_gbps (and each collective's busbw)
// from the step's intervals.
void summarise_comm(protocol::Step& step, int world_size);

// Median/p25/p75 of the measured steps; MFU when `peak_flops` > 0 (else -1).
protocol::Summary summarise(const std::vector<protocol::Step>& measured, double flops_per_token, double peak_flops,
                            int64_t peak_bytes);

}  // namespace tunebench::engine
