#include "core/investigate/plan_run.h"

#include <optional>
#include <utility>

#include "core/investigate/tune_session.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"

namespace tunebench::investigate {

PlanStep read_plan_step(store::SessionStore& s, const PlanRef& plan) {
  return plan.kind == PlanKind::Tune ? tune_step(s, plan.id) : investigation_step(s, plan.id, plan.budget);
}

void store_plan_end(store::SessionStore& s, const PlanRef& plan, store::PlanState state) {
  if (plan.kind == PlanKind::Tune)
    store::set_plan_result(s, plan.id, to_json(tune_report(s, plan.id)));
  else
    store::set_plan_result(s, plan.id, to_json(current_attribution(s, plan.id)));
  store::set_plan_state(s, plan.id, state);
}

store::PlanState run_plan(const std::string& session_path, const PlanRef& plan, const TrialExecutor& executor,
                          const std::function<void(const std::string&)>& note, const std::atomic<bool>* cancelled) {
  PlanDriver driver(plan.kind, plan.id);
  auto stop_asked = [cancelled] { return cancelled && cancelled->load(); };
  PlanActions todo = driver.start();
  for (;;) {
    PlanActions next;
    for (const std::string& line : todo.notes)
      if (note) note(line);
    try {
      if (todo.finish) {
        auto s = store::SessionStore::open(session_path);
        store_plan_end(s, plan, *todo.finish);
        return *todo.finish;
      }
      if (todo.store_state) {
        auto s = store::SessionStore::open(session_path);
        store::set_plan_state(s, plan.id, *todo.store_state);
      }
      // stop_trial: the executor has returned by the time the driver asks; nothing runs.
      if (todo.read_step) {
        if (stop_asked()) {
          next = driver.cancel();
        } else {
          auto s = store::SessionStore::open(session_path);
          next = driver.step_read(todo.read_step, read_plan_step(s, plan));
        }
      } else if (todo.launch) {
        // The executor validates, runs and stores the trial in one call: a trial it did not store
        // never started (refused, as the window's launcher refuses one).
        const TrialOutcome out = executor(*todo.launch);
        if (out.trial_id <= 0) {
          next = driver.launch_refused(out.message.empty() ? "the trial was not stored" : out.message);
        } else {
          next = driver.trial_queued("");
          if (stop_asked()) next.append(driver.cancel());
          next.append(driver.trial_ended("", out.status, out.trial_id, out.message));
        }
      }
    } catch (const std::exception& e) {
      if (todo.finish) throw;  // the end itself cannot be stored: the caller says why
      next = driver.failed(e.what());
    }
    if (!next.finish && !next.read_step && !next.launch && !next.store_state) {
      for (const std::string& line : next.notes)
        if (note) note(line);
      return driver.state();  // nothing more to do (cannot happen with the driver's rules)
    }
    todo = std::move(next);
  }
}

}  // namespace tunebench::investigate
