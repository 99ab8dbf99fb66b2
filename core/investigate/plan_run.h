// Running a stored plan: the session side of plan_driver.h, and the headless adapter.
//
// read_plan_step and store_plan_end are what any adapter does when the driver asks it to read the
// next step or to store the end; run_plan is the command line's adapter: it runs each trial with a
// blocking TrialExecutor (launch::run_trial into the session), polls Ctrl-C, and feeds the driver.
// The window's adapter is ui/windows/plan_run.h; both are tested against one fault table
// (tests/core/investigate/plan_faults.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/investigate/investigation.h"
#include "core/investigate/plan_driver.h"
#include "core/investigate/trial_executor.h"

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::investigate {

// A stored plan and how far it may go.
struct PlanRef {
  int64_t id = 0;
  PlanKind kind = PlanKind::Investigate;
  Budget budget;  // investigate only: a tune plan's budget is in its spec
};

// What the plan needs next (investigation_step / tune_step).
PlanStep read_plan_step(store::SessionStore& store, const PlanRef& plan);
// Stores the result of what ran (the attribution, or the search's report) and `state`.
void store_plan_end(store::SessionStore& store, const PlanRef& plan, store::PlanState state);

// Runs the plan from where the session says it stands until it is done or paused: each trial with
// `executor`, every line for people to `note`. `cancelled` (Ctrl-C) is polled between the steps;
// the executor stops its trial on it too. Returns the state stored at the end. Throws StoreError
// when the session cannot be written at all.
store::PlanState run_plan(const std::string& session_path, const PlanRef& plan, const TrialExecutor& executor,
                          const std::function<void(const std::string&)>& note,
                          const std::atomic<bool>* cancelled = nullptr);

}  // namespace tunebench::investigate
