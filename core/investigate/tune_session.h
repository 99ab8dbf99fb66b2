// An autotune search kept in a session: the spec as a plans row (kind "tune"), each measured
// point as a trial tagged with the plan and an arm named after its configuration. The search
// (autotune.h) is replayed against the stored trials to find the trial it asks for next
// (tune_step), which plan_driver.h runs; resuming after a crash re-runs only what is not stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/investigate/autotune.h"
#include "core/investigate/plan_driver.h"
#include "core/investigate/trial_executor.h"
#include "core/predict/evidence.h"

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::investigate {

struct PredictedPoint {
  TunePoint point;
  double objective = 0;  // predicted tokens/s (per GPU when the spec says so)
  double step_ms = 0;
};

struct TuneSpec {
  config::TrialConfig base;
  TuneSpace space;
  TuneOptions options;
  bool per_gpu = false;             // objective: tokens/s per GPU instead of total
  bool cuda = true;                 // memory model of a CUDA device
  int64_t device_memory_bytes = 0;  // 0: memory is not checked
  std::string gpu;                  // catalogue id or device name for predictions; empty: the session's GPU
  // core/predict's ranking of the space, best first, made once when the plan is opened (so a
  // resumed search replays the same order) from the session's trials on that GPU.
  std::vector<PredictedPoint> predicted;
  std::string prediction_note;      // what the ranking was calibrated on, or why there is none
};

nlohmann::json to_json(const TuneSpec& spec);
TuneSpec tune_spec_from_json(const nlohmann::json& j);

// The newest tune plan with the same spec (predictions aside), or a new one whose spec gains
// predict_space's ranking from the session's trials. Returns the plan id.
int64_t open_tune(store::SessionStore& store, const TuneSpec& spec, bool resume = true);

// Ranks every feasible point of the space by core/predict's step-time model, calibrated on the
// evidence's trials on the spec's GPU (catalogue efficiencies when there are none); fills
// spec.predicted and spec.prediction_note. Exhaustive specs are left unranked.
void predict_space(TuneSpec& spec, const predict::Evidence& evidence);
// The session's finished trials as prediction evidence.
predict::Evidence session_evidence(store::SessionStore& store);
TuneSpec load_tune(store::SessionStore& store, int64_t plan_id);

// The arm tag value of a configuration: "c" + 16 hex digits of a hash of its knobs (name aside).
std::string config_arm(const config::TrialConfig& config);
// What can prune a configuration: validation, then the memory prediction.
Feasible feasibility(const TuneSpec& spec);

struct TuneReport {
  TuneResult result;
  TuneSpec spec;
  std::vector<Evaluated> ranked;  // every measured trial, best objective first (long rung first)
  std::string command_line;       // tunebench-worker (torchrun) line of the best
  std::string limiter;            // what limited the best (its diagnosis)
  double grid_cost_estimate = 0;  // feasible points x mean long-trial cost
};

TuneReport tune_report(store::SessionStore& store, int64_t plan_id);

// The next trial the search needs, tagged with the plan (nullopt when it is finished), with its
// counts: the plan driver's read (plan_run.h: read_plan_step).
PlanStep tune_step(store::SessionStore& store, int64_t plan_id);

std::string render(const TuneReport& report);
nlohmann::json to_json(const TuneReport& report);

}  // namespace tunebench::investigate
