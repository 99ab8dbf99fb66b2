#include "tests/core/investigate/plan_faults.h"

#include <random>

#include "core/investigate/investigation.h"
#include "core/investigate/tune_session.h"
#include "core/store/event_log_import.h"

namespace tunebench::test {

PlanFaultSession make_plan_fault_session(const std::string& dir, const PlanFault& row) {
  PlanFaultSession out;
  out.path = dir + "/s.tbsession";
  store::SessionStore::create(out.path, row.name);
  config::TrialConfig c;
  c.name = "forum baseline";
  c.device = config::Device::Cuda;
  c.amp = config::Amp::Bf16;
  c.steps = 14;
  c.warmup = 2;
  testing::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  std::mt19937_64 rng(5);
  auto s = store::SessionStore::open(out.path);
  out.baseline = store::import_trial_log(s, testing::planted_trial(c, m, rng, "user"), c.name, "test").trial_id;
  if (row.kind == investigate::PlanKind::Investigate) {
    out.plan = investigate::open_investigation(s, out.baseline, {});
  } else {
    investigate::TuneSpec spec;
    spec.base = c;
    spec.space = investigate::default_space(c, true);
    spec.options.short_steps = 5;
    spec.options.long_steps = 12;
    spec.options.warmup = 2;
    out.plan = investigate::open_tune(s, spec);
  }
  return out;
}

int finished_trials(const std::string& session_path, int64_t plan) {
  auto s = store::SessionStore::open(session_path, {store::SessionStore::Mode::ReadOnly});
  int n = 0;
  for (const auto& [arm, list] : investigate::finished_arms(s.list_trials(), plan)) n += static_cast<int>(list.size());
  return n;
}

store::PlanState stored_state(const std::string& session_path, int64_t plan) {
  auto s = store::SessionStore::open(session_path, {store::SessionStore::Mode::ReadOnly});
  return store::find_plan(s, plan)->state;
}

bool stored_result_names_a_best(const std::string& session_path, int64_t plan) {
  auto s = store::SessionStore::open(session_path, {store::SessionStore::Mode::ReadOnly});
  const auto row = store::find_plan(s, plan);
  return row && row->result.is_object() && row->result.contains("best");
}

}  // namespace tunebench::test
