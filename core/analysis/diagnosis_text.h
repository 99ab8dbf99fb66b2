// Shared phrases of the single-trial and pair diagnoses: what the collectives and the devices are
// called, and the "13.5 GB of bf16 gradients at 310 GB/s, 74 % hidden behind backward" clause.
// Internal to core/analysis; no rules live here.
#pragma once

#include <string>

#include "core/analysis/trial_metrics.h"

namespace tunebench::analysis {

// "all-reduce" (DDP), "all-gather/reduce-scatter" (FSDP), else "communication".
std::string collective_name(const TrialMetrics& m);
// "bf16", "fp16", "fp32" or "16-bit" from bytes per parameter and the config; "" when unknown.
std::string gradient_dtype(const TrialMetrics& m);
// "13.5 GB of bf16 gradients at 310 GB/s, 74 % hidden behind backward" (parts that are known).
std::string comm_clause(const TrialMetrics& m);
// "13.5 GB x 2(n-1)/n = 13.5 GB on the bus at 310 GB/s = 43.5 ms"; "" without comm.
std::string floor_clause(const TrialMetrics& m);
// What one rank of the trial runs on, for sentences: config::device_noun of the trial's device,
// "GPU" (plural "GPUs") or "CPU rank": a CPU run is never called a GPU run.
bool on_gpu(const TrialMetrics& m);
std::string device_noun(const TrialMetrics& m, bool plural = false);
// What the trial ran on, for tables: "2 × NVIDIA H200" on GPUs, "2 CPU ranks" on the CPU,
// "2 × unknown device" where no rank said.
std::string devices_text(const TrialMetrics& m);

}  // namespace tunebench::analysis
