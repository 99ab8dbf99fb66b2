#include "core/investigate/investigation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/investigate/plan_tags.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"

namespace tunebench::investigate {
namespace {

constexpr const char* kInvestigationKind = "investigate";

struct Stored {
  std::map<std::string, std::vector<store::TrialInfo>> arms;
  int finished = 0;
  double minutes = 0;
};

Stored stored_of(store::SessionStore& s, int64_t plan_id) {
  Stored out;
  out.arms = finished_arms(s.list_trials(), plan_id);
  for (const auto& [arm, list] : out.arms)
    for (const auto& t : list) {
      ++out.finished;
      if (t.start_us && t.end_us) out.minutes += static_cast<double>(*t.end_us - *t.start_us) / 60e6;
    }
  return out;
}

// Trials the budget still allows (a large number when unlimited). A minutes budget allows as many
// trials as the mean stored trial time fits into what is left, and at least one while time is left.
int remaining(const Budget& b, const Stored& st) {
  int left = 1 << 20;
  if (b.max_trials > 0) left = std::min(left, b.max_trials - st.finished);
  if (b.max_minutes > 0) {
    if (st.minutes >= b.max_minutes) return 0;
    const double per = st.finished > 0 ? st.minutes / st.finished : 0;
    if (per > 0) left = std::min(left, std::max(1, static_cast<int>(std::floor((b.max_minutes - st.minutes) / per))));
  }
  return std::max(0, left);
}

struct Loaded {
  std::vector<store::LoadedTrial> trials;  // owns the logs
  std::map<std::string, ArmTrials> arms;
};

Loaded load_arms(store::SessionStore& s, const Stored& st) {
  Loaded l;
  size_t n = 0;
  for (const auto& [arm, list] : st.arms) n += list.size();
  l.trials.reserve(n);
  for (const auto& [arm, list] : st.arms) {
    ArmTrials& a = l.arms[arm];
    a.arm = arm;
    for (const auto& t : list) {
      if (t.status == protocol::TrialStatus::Failed) {
        a.failures.push_back(t.exit_reason.empty() ? "failed" : t.exit_reason);
        continue;
      }
      l.trials.push_back(s.load_trial(t.id));
      a.finished.push_back(&l.trials.back().log);
    }
  }
  return l;
}

Attribution attribution_of(const InvestigationPlan& plan, const Loaded& l) {
  ArmTrials base;
  if (auto it = l.arms.find(kBaselineArm); it != l.arms.end()) base = it->second;
  std::vector<ArmTrials> variants;
  for (const auto& [arm, a] : l.arms)
    if (arm != kBaselineArm) variants.push_back(a);
  return attribute(plan, base, variants);
}

TrialRequest request_for(int64_t plan_id, const InvestigationPlan& plan, const std::string& arm, int run) {
  TrialRequest r;
  const std::string title = plan.baseline.name.empty() ? "trial " + std::to_string(plan.baseline_trial) : plan.baseline.name;
  if (arm == kBaselineArm) {
    r.config = plan.baseline;
    r.name = "investigate " + title + ": baseline #" + std::to_string(run);
  } else {
    const auto it = std::find_if(plan.variants.begin(), plan.variants.end(), [&](const auto& v) { return v.arm == arm; });
    r.config = it->config;
    r.name = "investigate " + title + ": " + it->title + " #" + std::to_string(run);
  }
  r.config.name = r.name;
  r.tags = {plan_tag(plan_id), arm_tag(arm), "investigate"};
  return r;
}

}  // namespace

int64_t open_investigation(store::SessionStore& s, int64_t trial, const PlanOptions& options, bool resume) {
  if (resume) {
    const auto plans = store::list_plans(s);
    for (auto it = plans.rbegin(); it != plans.rend(); ++it)
      if (it->kind == kInvestigationKind && it->baseline_trial == trial) return it->id;
  }
  const auto loaded = s.load_trial(trial);
  const auto metrics = analysis::analyze(loaded.log);
  auto plan = plan_investigation(metrics, trial, options);
  if (plan.baseline.name.empty()) plan.baseline.name = loaded.info.name;
  return store::add_plan(s, kInvestigationKind, trial, to_json(plan));
}

InvestigationPlan load_investigation(store::SessionStore& s, int64_t plan_id) {
  const auto row = store::find_plan(s, plan_id);
  if (!row || row->kind != kInvestigationKind) throw std::runtime_error("no investigation plan " + std::to_string(plan_id));
  return plan_from_json(row->spec);
}

std::optional<NextTrial> next_trial(store::SessionStore& s, int64_t plan_id, const Budget& budget) {
  const auto plan = load_investigation(s, plan_id);
  const Stored st = stored_of(s, plan_id);
  const int left = remaining(budget, st);
  if (left <= 0) return std::nullopt;
  auto runs = [&](const std::string& arm) {
    const auto it = st.arms.find(arm);
    return it == st.arms.end() ? 0 : static_cast<int>(it->second.size());
  };
  auto make = [&](const std::string& arm, std::string why) {
    return NextTrial{request_for(plan_id, plan, arm, runs(arm) + 1), arm, std::move(why)};
  };
  const int base_runs = runs(kBaselineArm);
  if (base_runs == 0) return make(kBaselineArm, "baseline, run 1");
  const int base_missing = std::max(0, budget.baseline_repeats - base_runs);
  for (const auto& v : plan.variants)
    if (runs(v.arm) == 0 && left > base_missing) return make(v.arm, v.arm + " " + v.title);
  if (base_missing > 0) return make(kBaselineArm, "baseline, run " + std::to_string(base_runs + 1) + " (noise, drift)");
  // Repeats: variants within the noise, largest effect first.
  const Loaded l = load_arms(s, st);
  const Attribution a = attribution_of(plan, l);
  const FactorRow* pick = nullptr;
  for (const auto& f : a.factors) {
    if (f.failed || f.effect.beyond_noise || f.repeats >= budget.max_repeats) continue;
    if (!pick || std::abs(f.effect.ratio - 1) > std::abs(pick->effect.ratio - 1)) pick = &f;
  }
  if (!pick) return std::nullopt;
  char effect[32];
  std::snprintf(effect, sizeof(effect), "%+.1f %%", (pick->effect.ratio - 1) * 100);
  return make(pick->arm, "repeat " + pick->arm + " " + pick->title + ": " + effect + " is within the noise");
}

Attribution current_attribution(store::SessionStore& s, int64_t plan_id) {
  const auto plan = load_investigation(s, plan_id);
  const Loaded l = load_arms(s, stored_of(s, plan_id));
  return attribution_of(plan, l);
}

PlanStep investigation_step(store::SessionStore& s, int64_t plan_id, const Budget& budget) {
  PlanStep step;
  const auto next = next_trial(s, plan_id, budget);
  const Stored st = stored_of(s, plan_id);
  step.finished = st.finished;
  step.planned = static_cast<int>(load_investigation(s, plan_id).variants.size()) + budget.baseline_repeats;
  if (next) {
    step.next = next->request;
    step.why = next->why;
  } else {
    step.complete = current_attribution(s, plan_id).not_run.empty();
  }
  return step;
}

}  // namespace tunebench::investigate
