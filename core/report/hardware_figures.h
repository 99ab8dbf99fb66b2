// What the hardware says about one stored trial, as the HTML and Markdown reports print it:
// energy per step and tokens per joule (metrics/energy.h through analysis::TrialMetrics), SM and
// tensor-core activity (metrics/gpu_counters.h), the measured memory categories of its last
// memory-sampled step beside the prediction's terms (predict/memory_explain.h), and an
// out-of-memory explained. Each figure that is missing carries the reason. Internal to core/report:
// it computes no metric, it gathers and words them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/analysis/trial_metrics.h"
#include "core/predict/memory_explain.h"
#include "core/store/records.h"

namespace tunebench::report {

struct HardwareFigures {
  std::string energy;    // "412 J per step, 79.5 tokens/J (±4 %)", or "unknown: <why>"
  std::string activity;  // "SM 87 %, tensor cores 41 %", or "unknown: <why>"
  // The last memory-sampled measured step of the rank that held most, against the prediction.
  std::optional<predict::MemoryComparison> memory;
  int64_t memory_step = -1;
  int rank = 0;
  std::string memory_phase;
  int64_t reserved_free_bytes = 0;
  std::string memory_problem;  // why there are no categories (the worker's warning, or none sampled)
  std::optional<predict::OomExplanation> oom;
  std::string oom_problem;     // an out-of-memory whose allocator state is missing or unreadable
};

HardwareFigures hardware_figures(const store::LoadedTrial& trial, const analysis::TrialMetrics& metrics);

}  // namespace tunebench::report
