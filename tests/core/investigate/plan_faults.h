// One table of plan faults, run against both adapters of the plan driver: the command line's
// run_plan (tests/core/investigate/plan_run_test.cpp) and the window's PlanRun
// (tests/ui/windows/plan_run_test.cpp). Each row injects a fault into the k-th trial of a plan (the
// user stops it, Cancel comes while it runs, the launcher refuses it, it fails) and says what the
// plan must end with in both: the stored state, the plan's finished trials, how many trials ran,
// words of the last line, and how many trials a resume then runs to finish the plan. Trials are the
// planted stored trials of planted_trials.h. Qt-free.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/investigate/plan_driver.h"
#include "core/investigate/plan_tags.h"
#include "core/investigate/trial_executor.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "tests/core/investigate/planted_trials.h"

namespace tunebench::test {

struct PlanFault {
  std::string name;  // a gtest name
  investigate::PlanKind kind = investigate::PlanKind::Investigate;
  int budget = 4;  // investigate: trials at most
  // The fault, in the k-th trial this run asks for (1-based; 0: none).
  int stopped = 0;    // the user stops it (Stop in the window, a killed run): stored stopped
  int cancelled = 0;  // Cancel (Ctrl-C) comes while it runs: stopped, stored stopped
  int refused = 0;    // the launcher refuses it: nothing runs, nothing is stored
  int failed = 0;     // it fails: stored failed, and it counts
  // The outcome, the same from both adapters.
  store::PlanState state = store::PlanState::Done;
  int finished = 0;        // the plan's trials that ended done or failed, after this run
  int ran = 0;             // trials this run started (a refused one is not)
  std::string last_line;   // a substring of the last line for people
  int resume_runs = 0;     // trials a resume runs to finish the plan (-1: not resumed)
  bool best_so_far = false;  // tune: the stored report names a best while the search is unfinished

  explicit PlanFault(std::string n) : name(std::move(n)) {}
};

inline const std::vector<PlanFault>& plan_faults() {
  static const std::vector<PlanFault> rows = [] {
    std::vector<PlanFault> v;
    PlanFault ok("RunsToItsBudget");
    ok.finished = 4, ok.ran = 4, ok.last_line = "Done within the budget", ok.resume_runs = 0;
    v.push_back(ok);
    PlanFault stop("AStoppedTrialPausesThePlan");
    stop.stopped = 2, stop.state = store::PlanState::Paused, stop.finished = 1, stop.ran = 2;
    stop.last_line = "was stopped. The plan is paused", stop.resume_runs = 3;
    v.push_back(stop);
    PlanFault cancel("CancelStopsTheRunningTrialAndPauses");
    cancel.cancelled = 3, cancel.state = store::PlanState::Paused, cancel.finished = 2, cancel.ran = 3;
    cancel.last_line = "Cancelled: nothing of the plan runs now", cancel.resume_runs = 2;
    v.push_back(cancel);
    PlanFault refuse("ARefusedTrialPausesThePlan");
    refuse.refused = 2, refuse.state = store::PlanState::Paused, refuse.finished = 1, refuse.ran = 1;
    refuse.last_line = "Not started: refused for the test. The plan is paused", refuse.resume_runs = 3;
    v.push_back(refuse);
    PlanFault fail("AFailedTrialCountsAndThePlanGoesOn");
    fail.failed = 2, fail.finished = 4, fail.ran = 4, fail.last_line = "Done within the budget", fail.resume_runs = 0;
    v.push_back(fail);
    PlanFault tune("ACancelledSearchNamesTheBestSoFar");
    tune.kind = investigate::PlanKind::Tune, tune.cancelled = 4, tune.state = store::PlanState::Paused;
    tune.finished = 3, tune.ran = 4, tune.last_line = "Cancelled: nothing of the plan runs now";
    tune.resume_runs = -1, tune.best_so_far = true;
    v.push_back(tune);
    return v;
  }();
  return rows;
}

inline std::ostream& operator<<(std::ostream& os, const PlanFault& f) { return os << f.name; }

// A stored trial of the plan ends as the row says: `stopped` trials are stored with status
// stopped (not counted by the plan), `failed` ones failed; the planted executor stores the rest.
class PlantedTrials {
 public:
  PlantedTrials(const std::string& session_path, uint64_t seed) : m_path(session_path) {
    testing::PlantedModel m;
    m.data_wait_ms_no_workers = 43;
    m_executor = testing::planted_executor(session_path, m, seed, &m_runs);
  }
  // Runs (stores) the request; `status`: how it ends.
  investigate::TrialOutcome run(const investigate::TrialRequest& request, protocol::TrialStatus status) {
    investigate::TrialOutcome out = m_executor(request);
    if (status != out.status) {
      auto s = store::SessionStore::open(m_path);
      s.set_trial_status(out.trial_id, status, status == protocol::TrialStatus::Failed ? "failed for the test" : "");
      out.status = status;
      if (status == protocol::TrialStatus::Failed) out.message = "failed for the test";
    }
    return out;
  }
  int runs() const { return m_runs; }

 private:
  std::string m_path;
  int m_runs = 0;
  investigate::TrialExecutor m_executor;
};

// The session of a row: a stored baseline trial, and the plan of the row's kind opened on it.
struct PlanFaultSession {
  std::string path;
  int64_t baseline = 0;
  int64_t plan = 0;
};
PlanFaultSession make_plan_fault_session(const std::string& dir, const PlanFault& row);

// The plan's finished trials now.
int finished_trials(const std::string& session_path, int64_t plan);
// The stored plan's state, and whether its stored result names a best (tune).
store::PlanState stored_state(const std::string& session_path, int64_t plan);
bool stored_result_names_a_best(const std::string& session_path, int64_t plan);

}  // namespace tunebench::test
