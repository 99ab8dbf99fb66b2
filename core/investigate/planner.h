// The planner: one-factor variants of a measured baseline, the diagnosis's suggestions first,
// then the forum's usual suspects that apply to this configuration. Each variant is validated
// (config::validate) and checked against device memory with core/predict's memory model; what
// is left out is listed with the reason. The planner runs nothing.
#pragma once

#include <cstdint>

#include "core/analysis/trial_metrics.h"
#include "core/investigate/plan.h"

namespace tunebench::investigate {

struct PlanOptions {
  int64_t steps = 0;                // steps of every planned trial; 0: the baseline's
  int64_t warmup = -1;              // -1: the baseline's
  int64_t device_memory_bytes = 0;  // 0: the baseline's device (hello), else unchecked
};

// Whether `config` runs on CUDA devices here (the trial's device knob, else its hello device).
bool runs_on_cuda(const config::TrialConfig& config, const std::string& device_name);

// `baseline` must carry a config that knows every knob (native trials do; an imported trace must
// have its unknown settings filled in first): std::runtime_error otherwise.
InvestigationPlan plan_investigation(const analysis::TrialMetrics& baseline, int64_t baseline_trial,
                                     const PlanOptions& options = {});

}  // namespace tunebench::investigate
