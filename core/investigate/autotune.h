// Autotune: the fastest configuration in a space of knobs. Points that cannot fit (core/predict's
// memory model) or are invalid are pruned before anything runs. Then:
//   1. seeds: the base and the points core/predict ranks fastest (when the spec carries a
//      predicted order) are measured with short trials;
//   2. a coordinate search from the best short result moves one knob at a time, the axes the
//      diagnosis names first;
//   3. successive halving promotes the best short results through longer rungs (steps times eta
//      each) to the finalists, measured at long_steps; the best finalist wins.
// A budget keeps room for the later rungs: a trial's cost is predicted from the measured start-up
// and per-step time, so short trials are not mistaken for cheap ones when start-up dominates.
//
// The search is a pure function of its measurements: `search` asks a Lookup for each
// measurement it wants and stops at the first one that is not known yet, returning it as
// `pending`. A driver runs the pending trial, stores it, and calls `search` again; the search
// replays to the same point and goes on. So the search resumes from stored trials by
// construction, and a test can drive it with a simulated objective. This file runs no trial.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/diagnosis.h"
#include "core/config/trial_config.h"

namespace tunebench::investigate {

struct TuneValue {
  std::string label;                         // "zero3", "8", "fused"
  std::vector<analysis::KnobChange> changes;  // applied to the base
};

struct TuneAxis {
  std::string name;  // "strategy", "micro_batch", ...: the knob the diagnosis names
  std::vector<TuneValue> values;
};

struct TuneSpace {
  std::vector<TuneAxis> axes;
  size_t grid_size() const;
};

// The search space around `base`: strategy/ZeRO stage (several ranks), micro-batch, grad_accum,
// checkpointing, bucket size and compression (DDP), compile and amp (CUDA), num_workers.
TuneSpace default_space(const config::TrialConfig& base, bool cuda);
// "key=v1,v2,..." axes (key "zero": ddp, zero2, zero3); throws std::invalid_argument.
TuneAxis parse_axis(const std::string& text);

using TunePoint = std::vector<int>;  // one value index per axis

struct TuneOptions {
  int64_t short_steps = 8;    // rung 0
  int64_t long_steps = 20;    // finalists (and the exhaustive grid)
  int64_t warmup = 3;
  int finalists = 3;
  int seeds = 0;              // predicted points measured first; 0: about the square root of the feasible points
  double eta = 3;             // successive halving: steps grow and survivors shrink by this per rung
  int max_rounds = 3;         // coordinate-search rounds
  double min_gain = 0.01;     // a move must gain at least this (relative) to be taken
  double budget_cost = 0;     // cost units (seconds of trial time); 0: no limit
  bool exhaustive = false;    // measure every feasible point at long_steps instead of searching
  // The second objective the user may pick (issue 41): 0, the fastest; x > 0, of the finalists
  // within x (0.05: 5 %) of the fastest's objective, the one with the most tokens per joule
  // (metrics/energy.h). The search itself still runs on the objective.
  double cheapest_within = 0;
};

struct Measurement {
  bool failed = false;
  double objective = 0;       // higher is better (tokens/s, or samples/s: analysis::work_rate)
  std::string unit = "tokens";
  double cost = 0;            // what it spent (seconds of trial time, or simulated units)
  double step_cost = 0;       // what one more step costs (a step's time); 0: unknown
  std::vector<std::string> hint_keys;  // knobs the diagnosis's suggestions change, first first
  std::string limiter;        // the diagnosis verdict
  std::optional<double> tokens_per_joule;  // energy (metrics/energy.h); nullopt: unknown, and why below
  std::string energy_problem;
};

// The trial configuration of a point at `steps` (name says the point).
config::TrialConfig config_at(const config::TrialConfig& base, const TuneSpace& space, const TunePoint& p,
                              int64_t steps, int64_t warmup);
std::string point_label(const TuneSpace& space, const TunePoint& p);

using Feasible = std::function<std::optional<std::string>(const config::TrialConfig&)>;  // reason it cannot run
using Lookup = std::function<std::optional<Measurement>(const config::TrialConfig&)>;

struct Evaluated {
  TunePoint point;
  int64_t steps = 0;
  Measurement m;
};

struct TuneResult {
  std::optional<config::TrialConfig> pending;  // the next trial to run; the search is not finished
  std::vector<Evaluated> evaluations;           // in the order the search asked for them
  std::vector<std::pair<TunePoint, std::string>> pruned;  // infeasible points met, with the reason
  // The best finalist (long rung), else the best short result; while `pending`, the best so far
  // (the longest rung measured).
  std::optional<Evaluated> best;
  double cost = 0;                              // sum of the evaluations' costs
  bool budget_spent = false;
  std::string choice;  // how `best` was chosen among the finalists when cheapest_within is set
};

// Of `finalists` (succeeded, one rung), the one with the most tokens per joule among those within
// `within` of the highest objective; the fastest when any of those has no energy figure (`why`
// says which and why). nullopt for an empty list.
std::optional<Evaluated> cheapest_within(const std::vector<Evaluated>& finalists, double within, std::string* why);

// The steps of each rung: short_steps, short_steps * eta, ... while below long_steps, then long_steps.
std::vector<int64_t> rung_steps(const TuneOptions& options);

// Points in the order a model expects them to be fastest (best first); the search measures the
// first `seeds` feasible ones before its coordinate search. Empty: start from the base alone.
using PredictedOrder = std::vector<TunePoint>;

TuneResult search(const config::TrialConfig& base, const TuneSpace& space, const TuneOptions& options,
                  const Feasible& feasible, const Lookup& lookup, const PredictedOrder& predicted = {});

// Every point of the grid, in grid order (the last axis varies fastest).
std::vector<TunePoint> grid_points(const TuneSpace& space);

nlohmann::json to_json(const TuneSpace& space);
TuneSpace space_from_json(const nlohmann::json& j);

}  // namespace tunebench::investigate
