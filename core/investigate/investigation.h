// An investigation in a session: the plan stored as a plans row, its trials tagged with the plan
// and their arm, and the next trial to run derived from what is stored. Because the schedule is a
// function of the stored trials, a crashed or closed run resumes by asking again; nothing that
// finished is run twice. plan_driver.h runs it, for the CLI (plan_run.h) and the window alike.
//
// Schedule: the baseline, every variant once, the baseline again (run-to-run noise, drift), then
// repeats of the variants whose effect is within the noise, largest first, up to max_repeats.
// The budget (trials or minutes of stored trial time) keeps room for the second baseline run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/investigate/attribution.h"
#include "core/investigate/plan.h"
#include "core/investigate/plan_driver.h"
#include "core/investigate/planner.h"
#include "core/investigate/trial_executor.h"

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::investigate {

struct Budget {
  int max_trials = 0;         // 0: no limit
  double max_minutes = 0;     // 0: no limit; stored trial time (start to end) of the plan's trials
  int baseline_repeats = 2;
  int max_repeats = 2;        // runs of a variant whose effect is within the noise
};

// Finds the newest investigate plan of `trial` in the session, or plans and stores a new one.
// Returns the plan id. `resume` false always plans anew.
int64_t open_investigation(store::SessionStore& store, int64_t trial, const PlanOptions& options, bool resume = true);
InvestigationPlan load_investigation(store::SessionStore& store, int64_t plan_id);

struct NextTrial {
  TrialRequest request;
  std::string arm;
  std::string why;  // "baseline, run 1", "v3 num_workers 4", "repeat v2: within the noise"
};

// The next trial the plan needs, or nullopt when it is complete or the budget is spent.
std::optional<NextTrial> next_trial(store::SessionStore& store, int64_t plan_id, const Budget& budget);

// The attribution of what is stored now (partial plans too).
Attribution current_attribution(store::SessionStore& store, int64_t plan_id);

// What the plan needs next, with its counts: the plan driver's read (plan_run.h: read_plan_step).
PlanStep investigation_step(store::SessionStore& store, int64_t plan_id, const Budget& budget);

}  // namespace tunebench::investigate
