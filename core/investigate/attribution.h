// Attribution: each planned factor's measured effect against the repeated baseline, ranked, and
// the written verdict ("why is this configuration slow and what fixes it", with the numbers).
//
// Inputs are stored trials' logs grouped by arm; every figure comes from core/analysis
// (analyze_pooled: step time, tokens/s, breakdown, peak memory) and effect.h (interval, noise).
// Phases are compared at equal work: a variant's breakdown is scaled to the baseline's tokens per
// step, so doubling the micro-batch does not read as "everything got slower". No winner is
// declared inside the noise. This file runs nothing and stores nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/trial_metrics.h"
#include "core/investigate/effect.h"
#include "core/investigate/plan.h"
#include "core/protocol/trial_log.h"

namespace tunebench::investigate {

struct ArmTrials {
  std::string arm;
  std::vector<const protocol::TrialLog*> finished;  // done trials (repeats)
  std::vector<std::string> failures;                // failed trials' reasons
};

struct FactorRow {
  std::string arm, title, source;
  Category category = Category::Compute;
  int repeats = 0;
  bool failed = false;          // every trial of the arm failed
  std::string failure;
  Effect effect;                // on the throughput (total and per GPU alike: same ranks)
  double step_ms = 0;           // median step time
  double step_ms_equal_work = 0;  // the step time at the baseline's work per step
  double rate_total = 0, rate_per_gpu = 0;  // tokens/s, or samples/s (analysis::work_rate's unit)
  int64_t peak_bytes = 0;
  std::string phase_moved;      // the breakdown part that changed most (at equal work)
  double phase_delta_ms = 0;    // its change, ms per baseline step
};

struct Attribution {
  int baseline_repeats = 0;
  double noise_floor = kMinNoiseFloor;
  analysis::TrialMetrics baseline;   // pooled repeats
  std::vector<FactorRow> factors;    // ranked: faster beyond the noise first, failures last
  std::vector<std::string> not_run;  // planned variants with no trial yet (budget)
  std::string verdict;               // the answer, in sentences with numbers
  bool has_communication_factor() const;
};

Attribution attribute(const InvestigationPlan& plan, const ArmTrials& baseline, const std::vector<ArmTrials>& variants);

ArmSamples samples_of(const std::vector<const protocol::TrialLog*>& repeats);
nlohmann::json to_json(const Attribution& a);
// The attribution table and verdict as text (the CLI prints it).
std::string render(const Attribution& a);

}  // namespace tunebench::investigate
