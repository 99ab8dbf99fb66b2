#include "core/investigate/tune_session.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/analysis/diagnosis.h"
#include "core/config/script.h"
#include "core/analysis/format.h"
#include "core/investigate/plan_tags.h"
#include "core/launch/launch_plan.h"
#include "core/predict/memory_model.h"
#include "core/predict/predictor.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"

namespace tunebench::investigate {
namespace {

constexpr const char* kTuneKind = "tune";

nlohmann::json options_json(const TuneOptions& o) {
  return {{"short_steps", o.short_steps}, {"long_steps", o.long_steps}, {"warmup", o.warmup},
          {"finalists", o.finalists},     {"max_rounds", o.max_rounds}, {"min_gain", o.min_gain},
          {"budget_cost", o.budget_cost}, {"exhaustive", o.exhaustive}, {"seeds", o.seeds},
          {"eta", o.eta}, {"cheapest_within", o.cheapest_within}};
}

TuneOptions options_of(const nlohmann::json& j) {
  TuneOptions o;
  o.short_steps = j.at("short_steps");
  o.long_steps = j.at("long_steps");
  o.warmup = j.at("warmup");
  o.finalists = j.at("finalists");
  o.max_rounds = j.at("max_rounds");
  o.min_gain = j.at("min_gain");
  o.budget_cost = j.at("budget_cost");
  o.exhaustive = j.at("exhaustive");
  o.seeds = j.value("seeds", 0);      // plans written before seeds and eta existed
  o.eta = j.value("eta", 3.0);
  o.cheapest_within = j.value("cheapest_within", 0.0);  // plans written before issue 41: the fastest
  if (o.finalists < 1 || o.short_steps < 1 || o.long_steps < 1 || !(o.eta >= 1.5 && o.eta <= 100) || o.seeds < 0 ||
      !(o.cheapest_within >= 0 && o.cheapest_within < 1))
    throw std::runtime_error("not a tune plan: options out of range");
  return o;
}

// Measurements of the plan's stored trials, by arm (the newest finished trial of each).
std::map<std::string, Measurement> measured(store::SessionStore& s, int64_t plan_id, const TuneSpec& spec,
                                            std::map<std::string, Measurement>& cache) {
  for (const auto& [arm, list] : finished_arms(s.list_trials(), plan_id)) {
    if (cache.count(arm)) continue;
    const auto& t = list.back();
    Measurement m;
    m.cost = t.start_us && t.end_us ? static_cast<double>(*t.end_us - *t.start_us) / 1e6 : 0;
    if (t.status == protocol::TrialStatus::Failed) {
      m.failed = true;
      m.limiter = t.exit_reason;
    } else {
      const auto metrics = analysis::analyze(s.load_trial(t.id).log);
      m.failed = metrics.measured_steps == 0;
      const analysis::WorkRate rate = analysis::work_rate(metrics);
      m.objective = spec.per_gpu ? rate.per_gpu.median : rate.total.median;
      m.unit = rate.unit;
      m.step_cost = metrics.step_ms.median / 1000.0;
      m.tokens_per_joule = metrics.tokens_per_joule;
      m.energy_problem = metrics.energy_problem;
      const auto d = analysis::diagnose(metrics);
      m.limiter = d.verdict;
      for (const auto& f : d.findings)
        for (const auto& sug : f.suggestions)
          for (const auto& c : sug.changes) m.hint_keys.push_back(c.key);
    }
    cache[arm] = m;
  }
  return cache;
}

TuneResult replay(const TuneSpec& spec, const std::map<std::string, Measurement>& known) {
  const Lookup lookup = [&](const config::TrialConfig& c) -> std::optional<Measurement> {
    const auto it = known.find(config_arm(c));
    if (it == known.end()) return std::nullopt;
    return it->second;
  };
  PredictedOrder order;
  for (const auto& p : spec.predicted) order.push_back(p.point);
  return search(spec.base, spec.space, spec.options, feasibility(spec), lookup, order);
}

TrialRequest request_of(int64_t plan_id, const config::TrialConfig& pending) {
  TrialRequest req;
  req.config = pending;
  req.name = "tune: " + pending.name;
  req.config.name = req.name;
  req.tags = {plan_tag(plan_id), arm_tag(config_arm(pending)), "tune"};
  return req;
}

}  // namespace

nlohmann::json to_json(const TuneSpec& spec) {
  nlohmann::json j = {{"base", config::to_json(spec.base)},
                      {"space", to_json(spec.space)},
                      {"options", options_json(spec.options)},
                      {"per_gpu", spec.per_gpu},
                      {"cuda", spec.cuda},
                      {"device_memory_bytes", spec.device_memory_bytes}};
  if (!spec.gpu.empty()) j["gpu"] = spec.gpu;
  if (!spec.predicted.empty()) {
    auto ranked = nlohmann::json::array();
    for (const auto& p : spec.predicted)
      ranked.push_back({{"point", p.point}, {"objective", p.objective}, {"step_ms", p.step_ms}});
    j["predicted"] = ranked;
  }
  if (!spec.prediction_note.empty()) j["prediction_note"] = spec.prediction_note;
  return j;
}

TuneSpec tune_spec_from_json(const nlohmann::json& j) {
  try {
    TuneSpec s;
    auto parsed = config::from_json(j.at("base"));
    if (!parsed.ok()) throw std::runtime_error(config::describe(parsed.problems));
    s.base = parsed.config;
    s.space = space_from_json(j.at("space"));
    s.options = options_of(j.at("options"));
    s.per_gpu = j.at("per_gpu");
    s.cuda = j.at("cuda");
    s.device_memory_bytes = j.at("device_memory_bytes");
    s.gpu = j.value("gpu", std::string());
    if (j.contains("predicted"))
      for (const auto& p : j.at("predicted")) {
        PredictedPoint pp{p.at("point").get<TunePoint>(), p.at("objective").get<double>(), p.value("step_ms", 0.0)};
        if (pp.point.size() != s.space.axes.size()) throw std::runtime_error("a predicted point does not match the space");
        for (size_t a = 0; a < pp.point.size(); ++a)
          if (pp.point[a] < 0 || static_cast<size_t>(pp.point[a]) >= s.space.axes[a].values.size())
            throw std::runtime_error("a predicted point lies outside the space");
        s.predicted.push_back(std::move(pp));
      }
    s.prediction_note = j.value("prediction_note", std::string());
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a tune plan: ") + e.what());
  }
}

std::string config_arm(const config::TrialConfig& config) { return "c" + config_key(config); }

Feasible feasibility(const TuneSpec& spec) {
  return [spec](const config::TrialConfig& c) -> std::optional<std::string> {
    const auto problems = config::validate(c);
    if (!problems.empty()) return "invalid: " + config::describe(problems);
    if (spec.device_memory_bytes > 0 && !config::is_script(c)) {  // a script's memory is not the model's
      predict::MemoryOptions mo;
      mo.cuda = spec.cuda;
      const auto pred = predict::predict_memory(c, mo);
      if (predict::fit_of(pred, spec.device_memory_bytes) == predict::Fit::DoesNotFit)
        return "does not fit: predicted " + analysis::format_gib(static_cast<double>(pred.device_needed_bytes)) +
               " per device, " + analysis::format_gib(static_cast<double>(spec.device_memory_bytes)) + " available";
    }
    return std::nullopt;
  };
}

namespace {
// The spec as a resumed plan is matched: what the user asked for, without the ranking made for it.
nlohmann::json identity(nlohmann::json j) {
  j.erase("predicted");
  j.erase("prediction_note");
  return j;
}
}  // namespace

predict::Evidence session_evidence(store::SessionStore& s) {
  predict::Evidence evidence;
  for (const auto& t : s.list_trials()) {
    if (t.status != protocol::TrialStatus::Done) continue;
    auto loaded = s.load_trial(t.id);
    evidence.add(t.name, std::make_shared<protocol::TrialLog>(std::move(loaded.log)), t.tags);
  }
  return evidence;
}

void predict_space(TuneSpec& spec, const predict::Evidence& evidence) {
  spec.predicted.clear();
  spec.prediction_note.clear();
  if (spec.options.exhaustive) return;
  if (config::is_script(spec.base)) {
    spec.prediction_note = "no predicted order: core/predict models the benchmark, not your script (the search "
                           "starts from its own settings)";
    return;
  }
  if (!spec.cuda) {
    spec.prediction_note = "no predicted order: core/predict models GPU step times only (the search starts from the base)";
    return;
  }
  std::string gpu = spec.gpu;
  if (gpu.empty())
    for (const auto& t : evidence.trials())
      if (t.cuda && t.has_steps()) {
        gpu = t.device;
        break;
      }
  if (gpu.empty()) {
    spec.prediction_note = "no predicted order: no GPU named and no trial on one in the session";
    return;
  }
  const auto* g = hardware::find_gpu(gpu);
  if (!g) {
    spec.prediction_note = "no predicted order: '" + gpu + "' is not in the hardware catalogue";
    return;
  }
  const auto used = evidence.select([g](const predict::MeasuredTrial& t) { return t.gpu == g; });
  const auto feasible = feasibility(spec);
  size_t unknown = 0;
  for (const auto& p : grid_points(spec.space)) {
    predict::Scenario sc;
    sc.config = config_at(spec.base, spec.space, p, spec.options.long_steps, spec.options.warmup);
    if (feasible(sc.config)) continue;
    sc.gpu = gpu;
    sc.device_memory_bytes = spec.device_memory_bytes;
    const auto pred = predict::predict_scenario(sc, used);
    if (!pred.step || pred.step->step_ms <= 0) {
      ++unknown;
      continue;
    }
    spec.predicted.push_back(
        {p, spec.per_gpu ? pred.step->tokens_per_s_per_gpu : pred.step->tokens_per_s_total, pred.step->step_ms});
  }
  std::stable_sort(spec.predicted.begin(), spec.predicted.end(),
                   [](const PredictedPoint& a, const PredictedPoint& b) { return a.objective > b.objective; });
  spec.prediction_note = "predicted order of " + std::to_string(spec.predicted.size()) + " points on " + g->name +
                         ", calibrated on " +
                         std::to_string(used.size()) + " trial" + (used.size() == 1 ? "" : "s") + " of the session" +
                         (used.empty() ? " (catalogue efficiencies)" : "");
  if (unknown) spec.prediction_note += "; " + std::to_string(unknown) + " points without a prediction";
}

int64_t open_tune(store::SessionStore& s, const TuneSpec& spec, bool resume) {
  const auto wanted = identity(to_json(spec));
  if (resume) {
    const auto plans = store::list_plans(s);
    for (auto it = plans.rbegin(); it != plans.rend(); ++it)
      if (it->kind == kTuneKind && identity(it->spec) == wanted) return it->id;
  }
  TuneSpec ranked = spec;
  if (ranked.predicted.empty() && !ranked.options.exhaustive) predict_space(ranked, session_evidence(s));
  return store::add_plan(s, kTuneKind, std::nullopt, to_json(ranked));
}

TuneSpec load_tune(store::SessionStore& s, int64_t plan_id) {
  const auto row = store::find_plan(s, plan_id);
  if (!row || row->kind != kTuneKind) throw std::runtime_error("no tune plan " + std::to_string(plan_id));
  return tune_spec_from_json(row->spec);
}

TuneReport tune_report(store::SessionStore& s, int64_t plan_id) {
  TuneReport r;
  r.spec = load_tune(s, plan_id);
  std::map<std::string, Measurement> cache;
  measured(s, plan_id, r.spec, cache);
  r.result = replay(r.spec, cache);
  r.ranked = r.result.evaluations;
  std::stable_sort(r.ranked.begin(), r.ranked.end(), [](const Evaluated& a, const Evaluated& b) {
    if (a.steps != b.steps) return a.steps > b.steps;
    const double x = a.m.failed ? -1 : a.m.objective, y = b.m.failed ? -1 : b.m.objective;
    return x > y;
  });
  if (r.result.best) {
    const auto best = config_at(r.spec.base, r.spec.space, r.result.best->point, r.spec.options.long_steps,
                                r.spec.options.warmup);
    r.command_line = launch::worker_command_line(best);
    r.limiter = r.result.best->m.limiter;
  }
  double long_cost = 0;
  int long_n = 0;
  for (const auto& e : r.result.evaluations)
    if (e.steps == r.spec.options.long_steps) {
      long_cost += e.m.cost;
      ++long_n;
    }
  if (long_n > 0) {
    const auto feasible = feasibility(r.spec);
    size_t n_feasible = 0;
    for (const auto& p : grid_points(r.spec.space)) {
      if (!feasible(config_at(r.spec.base, r.spec.space, p, r.spec.options.long_steps, r.spec.options.warmup)))
        ++n_feasible;
    }
    r.grid_cost_estimate = static_cast<double>(n_feasible) * long_cost / long_n;
  }
  return r;
}

PlanStep tune_step(store::SessionStore& s, int64_t plan_id) {
  const auto spec = load_tune(s, plan_id);
  std::map<std::string, Measurement> cache;
  measured(s, plan_id, spec, cache);
  const auto r = replay(spec, cache);
  PlanStep step;
  for (const auto& [arm, list] : finished_arms(s.list_trials(), plan_id)) step.finished += static_cast<int>(list.size());
  step.complete = !r.pending;
  if (r.pending) {
    step.next = request_of(plan_id, *r.pending);
    char cost[64];
    std::snprintf(cost, sizeof(cost), " (%.0f s of trials so far)", r.cost);
    step.why = r.pending->name + cost;
  }
  return step;
}

std::string render(const TuneReport& r) {
  std::string out;
  const auto& o = r.spec.options;
  out += std::string(o.exhaustive ? "exhaustive grid" : "search") + ": " + std::to_string(r.result.evaluations.size()) +
         " trials, " + std::to_string(static_cast<long long>(r.result.cost)) + " s of trial time; grid of " +
         std::to_string(r.spec.space.grid_size()) + " points";
  if (r.grid_cost_estimate > 0)
    out += " (exhaustive at " + std::to_string(o.long_steps) + " steps: about " +
           std::to_string(static_cast<long long>(r.grid_cost_estimate)) + " s)";
  out += "\n";
  if (!r.result.pruned.empty()) out += std::to_string(r.result.pruned.size()) + " points pruned before running (memory or validity)\n";
  if (!r.spec.prediction_note.empty()) out += r.spec.prediction_note + "\n";
  std::map<TunePoint, double> predicted;
  for (const auto& p : r.spec.predicted) predicted[p.point] = p.objective;
  out += "rank  steps  objective      predicted  point\n";
  int i = 0;
  for (const auto& e : r.ranked) {
    char line[96], pred[24] = "-";
    if (const auto it = predicted.find(e.point); it != predicted.end()) std::snprintf(pred, sizeof(pred), "%.1f", it->second);
    if (e.m.failed)
      std::snprintf(line, sizeof(line), "%4d  %5lld  %13s  %9s  ", ++i, static_cast<long long>(e.steps), "failed", pred);
    else
      std::snprintf(line, sizeof(line), "%4d  %5lld  %13.1f  %9s  ", ++i, static_cast<long long>(e.steps), e.m.objective,
                    pred);
    out += line + point_label(r.spec.space, e.point) + "\n";
  }
  if (r.result.best) {
    out += std::string(r.result.pending ? "best so far: " : "best: ") + point_label(r.spec.space, r.result.best->point) + ", " +
           std::to_string(static_cast<long long>(r.result.best->m.objective)) + " " + r.result.best->m.unit + "/s" +
           (r.spec.per_gpu ? " per " + config::device_noun(r.spec.cuda) : std::string()) + " (" + std::to_string(r.result.best->steps) + "-step trial)\n";
    if (!r.result.choice.empty()) out += "chosen as " + r.result.choice + "\n";
    out += "limited by: " + r.limiter + "\n";
    out += "run it: " + r.command_line + "\n";
  } else {
    out += "no configuration ran successfully\n";
  }
  if (r.result.pending) out += "not finished: the budget or a cancel stopped it; run again to resume\n";
  return out;
}

nlohmann::json to_json(const TuneReport& r) {
  nlohmann::json j;
  j["trials"] = nlohmann::json::array();
  for (const auto& e : r.ranked)
    j["trials"].push_back({{"point", point_label(r.spec.space, e.point)},
                           {"steps", e.steps},
                           {"failed", e.m.failed},
                           {"objective", e.m.objective},
                           {"cost_s", e.m.cost}});
  j["cost_s"] = r.result.cost;
  j["grid_points"] = r.spec.space.grid_size();
  j["grid_cost_estimate_s"] = r.grid_cost_estimate;
  j["pruned"] = r.result.pruned.size();
  j["exhaustive"] = r.spec.options.exhaustive;
  j["prediction_note"] = r.spec.prediction_note;
  j["rungs"] = rung_steps(r.spec.options);
  j["finished"] = !r.result.pending.has_value();
  if (r.result.best) {
    const auto best = config_at(r.spec.base, r.spec.space, r.result.best->point, r.spec.options.long_steps,
                                r.spec.options.warmup);
    j["best"] = {{"point", point_label(r.spec.space, r.result.best->point)},
                 {"objective", r.result.best->m.objective},
                 {"config", config::to_json(best)},
                 {"command_line", r.command_line},
                 {"limiter", r.limiter},
                 {"tokens_per_joule", r.result.best->m.tokens_per_joule ? nlohmann::json(*r.result.best->m.tokens_per_joule)
                                                                         : nlohmann::json()},
                 {"choice", r.result.choice}};
  }
  return j;
}

}  // namespace tunebench::investigate
