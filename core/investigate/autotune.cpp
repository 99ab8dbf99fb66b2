#include "core/investigate/autotune.h"

#include "core/config/script.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "core/predict/memory_model.h"
#include "core/rules/optimizer_rules.h"

namespace tunebench::investigate {
namespace {

using analysis::KnobChange;

std::string num(int64_t v) { return std::to_string(v); }

// Thrown inside the search when a measurement is not known yet; caught by search().
struct NeedMeasurement {
  config::TrialConfig config;
};

std::string key_of(const config::TrialConfig& c) {
  auto j = config::to_json(c);
  j.erase("name");
  return j.dump();
}

class Search {
 public:
  Search(const config::TrialConfig& base, const TuneSpace& space, const TuneOptions& o, const Feasible& f,
         const Lookup& l, const PredictedOrder& predicted)
      : m_base(base), m_space(space), m_o(o), m_feasible(f), m_lookup(l), m_predicted(predicted),
        m_rungs(rung_steps(o)) {}

  TuneResult run() {
    try {
      const size_t feasible = prune_all();
      if (m_o.exhaustive) exhaustive();
      else seeded_search(feasible);
    } catch (const NeedMeasurement& n) {
      m_result.pending = n.config;
      // Not finished (a budget, a cancel): what ran still names a best so far.
      if (!m_result.best) m_result.best = best_so_far();
    }
    m_result.cost = m_cost;
    return m_result;
  }

 private:
  // nullopt: infeasible (pruned). Throws NeedMeasurement for an unknown measurement. A copy:
  // the evaluations vector grows while the caller holds the result.
  // Every point's feasibility is known before the first eval (prune_all).
  std::optional<Evaluated> eval(const TunePoint& p, int64_t steps) {
    if (m_infeasible.count(p)) return std::nullopt;
    const auto cfg = config_at(m_base, m_space, p, steps, m_o.warmup);
    const std::string key = key_of(cfg);
    if (auto it = m_index.find(key); it != m_index.end()) return m_result.evaluations[it->second];
    auto m = m_lookup(cfg);
    if (!m) throw NeedMeasurement{cfg};
    m_cost += m->cost;
    if (steps == m_o.short_steps) {
      m_short_cost += m->cost;
      ++m_short_n;
    }
    if (m->step_cost > 0) {
      m_step_cost += m->step_cost;
      ++m_step_n;
    }
    m_index[key] = m_result.evaluations.size();
    m_result.evaluations.push_back({p, steps, *m});
    return m_result.evaluations.back();
  }

  bool measured(const TunePoint& p, int64_t steps) const {
    return m_index.count(key_of(config_at(m_base, m_space, p, steps, m_o.warmup))) > 0;
  }

  static double score(const std::optional<Evaluated>& e) { return !e || e->m.failed ? -1.0 : e->m.objective; }

  // Every point's feasibility, before anything runs: the pruned list is complete and the seed
  // count can depend on how many points are left.
  size_t prune_all() {
    size_t feasible = 0;
    for (const auto& p : grid_points(m_space)) {
      const auto cfg = config_at(m_base, m_space, p, m_o.short_steps, m_o.warmup);
      if (auto reason = m_feasible(cfg)) {
        m_infeasible.insert(p);
        m_result.pruned.push_back({p, *reason});
      } else {
        ++feasible;
      }
    }
    return feasible;
  }

  // Expected cost of a new short trial, and of one more step. Before any measurement both are 0
  // (the first trial always runs). Without per-step times, a step costs short/short_steps (as if
  // there were no start-up).
  double short_estimate() const { return m_short_n > 0 ? m_short_cost / m_short_n : 0; }
  double step_estimate() const {
    if (m_step_n > 0) return m_step_cost / m_step_n;
    return short_estimate() / static_cast<double>(std::max<int64_t>(1, m_o.short_steps));
  }

  // How many points each later rung measures when `n` points finished the first.
  std::vector<size_t> survivors(size_t n) const {
    std::vector<size_t> out;
    size_t prev = n;
    for (size_t r = 1; r < m_rungs.size(); ++r) {
      size_t k = static_cast<size_t>(m_o.finalists);
      if (r + 1 < m_rungs.size())
        k = std::max(k, static_cast<size_t>(std::ceil(static_cast<double>(n) / std::pow(m_o.eta, static_cast<double>(r)))));
      k = std::min(k, prev);
      out.push_back(k);
      prev = k;
    }
    return out;
  }

  // What the later rungs will cost when `n` points finished the first.
  double reserve(size_t n) const {
    double total = 0;
    const auto k = survivors(n);
    for (size_t r = 1; r < m_rungs.size(); ++r)
      total += static_cast<double>(k[r - 1]) *
               (short_estimate() + static_cast<double>(m_rungs[r] - m_o.short_steps) * step_estimate());
    return total;
  }

  // Whether the budget leaves room for one more short trial and the later rungs' trials.
  bool room_for_short() const {
    if (m_o.budget_cost <= 0) return true;
    return m_cost + short_estimate() + reserve(static_cast<size_t>(m_short_n) + 1) <= m_o.budget_cost;
  }

  // A short measurement of p, unless the budget has no room for a new one (then false).
  bool try_short(const TunePoint& p, std::optional<Evaluated>* out = nullptr) {
    if (!measured(p, m_o.short_steps) && !m_infeasible.count(p) && !room_for_short()) {
      m_result.budget_spent = true;
      return false;
    }
    const auto e = eval(p, m_o.short_steps);
    if (out) *out = e;
    return true;
  }

  TunePoint base_point() const {
    TunePoint p(m_space.axes.size(), 0);
    const std::string base_key = key_of(m_base);
    for (size_t a = 0; a < m_space.axes.size(); ++a)
      for (size_t v = 0; v < m_space.axes[a].values.size(); ++v) {
        analysis::Suggestion s{"", m_space.axes[a].values[v].changes, ""};
        if (key_of(analysis::apply(s, m_base)) == base_key) {
          p[a] = static_cast<int>(v);
          break;
        }
      }
    return p;
  }

  std::vector<size_t> axis_order(const std::optional<Evaluated>& cur) const {
    std::vector<size_t> order;
    if (cur)
      for (const auto& k : cur->m.hint_keys) {
        const std::string name = k == "fsdp_mode" ? "strategy" : k;
        for (size_t a = 0; a < m_space.axes.size(); ++a)
          if (m_space.axes[a].name == name && std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
      }
    for (size_t a = 0; a < m_space.axes.size(); ++a)
      if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
    return order;
  }

  // Of the trials that succeeded, the best of the longest rung measured (nullopt when none did).
  std::optional<Evaluated> best_so_far() const {
    std::optional<Evaluated> best;
    for (const auto& e : m_result.evaluations) {
      if (e.m.failed) continue;
      if (!best || e.steps > best->steps || (e.steps == best->steps && e.m.objective > best->m.objective)) best = e;
    }
    return best;
  }

  // The best short result so far (nullopt when none succeeded).
  std::optional<Evaluated> best_short() const {
    std::optional<Evaluated> best;
    for (const auto& e : m_result.evaluations)
      if (e.steps == m_o.short_steps && !e.m.failed && (!best || e.m.objective > best->m.objective)) best = e;
    return best;
  }

  void seeded_search(size_t feasible) {
    // 1. Seeds: the base, then the predicted best.
    TunePoint cur = base_point();
    std::optional<Evaluated> cur_e;
    bool out_of_budget = !try_short(cur, &cur_e);
    if (!m_predicted.empty() && !out_of_budget) {
      const size_t want = m_o.seeds > 0 ? static_cast<size_t>(m_o.seeds)
                                         : static_cast<size_t>(std::ceil(std::sqrt(static_cast<double>(feasible))));
      size_t seeded = 0;
      for (const auto& p : m_predicted) {
        if (seeded >= want) break;
        if (p.size() != m_space.axes.size() || m_infeasible.count(p) || p == cur) continue;
        if (!try_short(p)) {
          out_of_budget = true;
          break;
        }
        ++seeded;
      }
    }
    if (auto b = best_short()) {
      cur = b->point;
      cur_e = b;
    }
    // 2. Coordinate search from the best seed, the diagnosis's axes first.
    for (int round = 0; round < m_o.max_rounds && !out_of_budget; ++round) {
      bool improved = false;
      for (size_t a : axis_order(cur_e)) {
        TunePoint best = cur;
        double best_score = score(cur_e);
        for (int v = 0; v < static_cast<int>(m_space.axes[a].values.size()); ++v) {
          if (v == cur[a]) continue;
          TunePoint p = cur;
          p[a] = v;
          std::optional<Evaluated> e;
          if (!try_short(p, &e)) {
            out_of_budget = true;
            break;
          }
          if (score(e) > std::max(best_score, 0.0) * (1 + m_o.min_gain) && score(e) > best_score) {
            best = p;
            best_score = score(e);
          }
        }
        if (best != cur) {
          cur = best;
          cur_e = eval(cur, m_o.short_steps);
          improved = true;
        }
        if (out_of_budget) break;
      }
      if (!improved) break;
    }
    // 3. Successive halving: the best short results, longer at each rung.
    std::vector<Evaluated> pool;
    for (const auto& e : m_result.evaluations)
      if (e.steps == m_o.short_steps && !e.m.failed) pool.push_back(e);
    auto by_objective = [](const Evaluated& x, const Evaluated& y) { return x.m.objective > y.m.objective; };
    std::stable_sort(pool.begin(), pool.end(), by_objective);
    const auto keep = survivors(pool.size());
    for (size_t r = 1; r < m_rungs.size(); ++r) {
      std::vector<Evaluated> next;
      for (size_t i = 0; i < std::min(keep[r - 1], pool.size()); ++i) {
        const auto e = eval(pool[i].point, m_rungs[r]);
        if (e && !e->m.failed) next.push_back(*e);
      }
      if (next.empty()) break;
      std::stable_sort(next.begin(), next.end(), by_objective);
      pool = std::move(next);
    }
    if (!pool.empty()) m_result.best = pool.front();
    if (m_o.cheapest_within > 0 && !pool.empty()) m_result.best = cheapest_within(pool, m_o.cheapest_within, &m_result.choice);
  }

  void exhaustive() {
    for (const auto& p : grid_points(m_space)) {
      const auto e = eval(p, m_o.long_steps);
      if (e && !e->m.failed && (!m_result.best || e->m.objective > m_result.best->m.objective)) m_result.best = *e;
    }
    if (m_o.cheapest_within > 0) {
      std::vector<Evaluated> all;
      for (const auto& e : m_result.evaluations)
        if (!e.m.failed && e.steps == m_o.long_steps) all.push_back(e);
      if (!all.empty()) m_result.best = cheapest_within(all, m_o.cheapest_within, &m_result.choice);
    }
  }

  const config::TrialConfig& m_base;
  const TuneSpace& m_space;
  const TuneOptions& m_o;
  const Feasible& m_feasible;
  const Lookup& m_lookup;
  const PredictedOrder& m_predicted;
  const std::vector<int64_t> m_rungs;
  TuneResult m_result;
  std::map<std::string, size_t> m_index;
  std::set<TunePoint> m_infeasible;
  double m_cost = 0, m_short_cost = 0, m_step_cost = 0;
  int m_short_n = 0, m_step_n = 0;
};

TuneValue single(const std::string& key, const std::string& value) { return {value, {{key, value}}}; }

}  // namespace

size_t TuneSpace::grid_size() const {
  size_t n = axes.empty() ? 0 : 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

TuneAxis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= text.size())
    throw std::invalid_argument("an axis is KEY=V1,V2,...: '" + text + "'");
  TuneAxis axis;
  axis.name = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    const size_t comma = rest.find(',', pos);
    const std::string v = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!v.empty()) {
      if (axis.name == "zero" || (axis.name == "strategy" && (v == "zero2" || v == "zero3"))) {
        if (v == "ddp") axis.values.push_back({"ddp", {{"strategy", "ddp"}}});
        else if (v == "zero2") axis.values.push_back({"zero2", {{"strategy", "fsdp"}, {"fsdp_mode", "shard_grad_op"}}});
        else if (v == "zero3") axis.values.push_back({"zero3", {{"strategy", "fsdp"}, {"fsdp_mode", "full_shard"}}});
        else throw std::invalid_argument("zero takes ddp, zero2, zero3: '" + v + "'");
      } else {
        config::TrialConfig probe;
        if (auto p = config::set_knob(probe, axis.name, v)) throw std::invalid_argument(p->key + ": " + p->message);
        axis.values.push_back(single(axis.name, v));
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (axis.name == "zero") axis.name = "strategy";
  if (axis.values.empty()) throw std::invalid_argument("axis " + axis.name + " has no value");
  return axis;
}

namespace {
// A script's space: what the probe applies, and micro_batch when the arguments name it.
TuneSpace script_space(const config::TrialConfig& base, bool cuda) {
  TuneSpace s;
  if (config::script_can_set(base, "micro_batch")) {
    TuneAxis mb{"micro_batch", {}};
    if (base.micro_batch / 2 >= 1) mb.values.push_back(single("micro_batch", num(base.micro_batch / 2)));
    for (const int64_t k : {1, 2, 4}) mb.values.push_back(single("micro_batch", num(base.micro_batch * k)));
    s.axes.push_back(mb);
  }
  s.axes.push_back({"num_workers", {single("num_workers", "0"), single("num_workers", "2"), single("num_workers", "4")}});
  if (cuda) {
    s.axes.push_back({"pin_memory", {single("pin_memory", "false"), single("pin_memory", "true")}});
    s.axes.push_back({"amp", {single("amp", "fp32"), single("amp", "tf32"), single("amp", "bf16")}});
  }
  if (base.world_size > 1) s.axes.push_back({"bucket_mb", {single("bucket_mb", "25"), single("bucket_mb", "100")}});
  return s;
}
}  // namespace

TuneSpace default_space(const config::TrialConfig& base, bool cuda) {
  if (config::is_script(base)) return script_space(base, cuda);
  TuneSpace s;
  const bool dist = base.world_size > 1;
  if (dist)
    s.axes.push_back({"strategy",
                      {{"ddp", {{"strategy", "ddp"}}},
                       {"zero2", {{"strategy", "fsdp"}, {"fsdp_mode", "shard_grad_op"}}},
                       {"zero3", {{"strategy", "fsdp"}, {"fsdp_mode", "full_shard"}}}}});
  {
    TuneAxis mb{"micro_batch", {}};
    std::vector<int64_t> values;
    if (base.micro_batch / 2 >= 1) values.push_back(base.micro_batch / 2);
    values.push_back(base.micro_batch);
    values.push_back(base.micro_batch * 2);
    values.push_back(base.micro_batch * 4);
    for (auto v : values) mb.values.push_back(single("micro_batch", num(v)));
    s.axes.push_back(mb);
  }
  if (dist) s.axes.push_back({"grad_accum", {single("grad_accum", "1"), single("grad_accum", "2"), single("grad_accum", "4")}});
  s.axes.push_back({"checkpointing", {single("checkpointing", "false"), single("checkpointing", "true")}});
  if (dist && base.strategy == config::Strategy::Ddp) {
    s.axes.push_back({"bucket_mb", {single("bucket_mb", "25"), single("bucket_mb", "100")}});
    s.axes.push_back({"compression", {single("compression", "none"), single("compression", cuda ? "bf16" : "fp16")}});
  }
  if (cuda) {
    s.axes.push_back({"compile", {single("compile", "off"), single("compile", "fused")}});
    s.axes.push_back({"amp", {single("amp", "bf16"), single("amp", "fp32")}});
  }
  // bf16 weight gradients where the base runs them at compile fused and amp bf16 (the points where
  // config::validate refuses them, eager or fp32, are skipped as infeasible, not run).
  config::TrialConfig bf16_grads = base;
  bf16_grads.compile = config::Compile::Fused;
  bf16_grads.amp = config::Amp::Bf16;
  bf16_grads.grad_dtype = config::DType::Bf16;
  if (rules::half_weight_grads(bf16_grads, cuda))
    s.axes.push_back({"grad_dtype", {single("grad_dtype", "fp32"), single("grad_dtype", "bf16")}});
  s.axes.push_back({"num_workers", {single("num_workers", "0"), single("num_workers", "2"), single("num_workers", "4")}});
  return s;
}

config::TrialConfig config_at(const config::TrialConfig& base, const TuneSpace& space, const TunePoint& p,
                              int64_t steps, int64_t warmup) {
  std::vector<KnobChange> changes;
  for (size_t a = 0; a < space.axes.size(); ++a)
    for (const auto& c : space.axes[a].values.at(static_cast<size_t>(p.at(a))).changes) changes.push_back(c);
  analysis::Suggestion s{"", changes, ""};
  config::TrialConfig c = analysis::apply(s, base);
  c.steps = steps;
  c.warmup = std::min<int64_t>(warmup, std::max<int64_t>(0, steps - 2));
  c.name = base.name + " [" + point_label(space, p) + "] " + std::to_string(steps) + " steps";
  return c;
}

std::string point_label(const TuneSpace& space, const TunePoint& p) {
  std::string out;
  for (size_t a = 0; a < space.axes.size(); ++a)
    out += (a ? " " : "") + space.axes[a].name + "=" + space.axes[a].values.at(static_cast<size_t>(p.at(a))).label;
  return out;
}

std::vector<int64_t> rung_steps(const TuneOptions& o) {
  std::vector<int64_t> steps{o.short_steps};
  if (o.long_steps <= o.short_steps) return steps;
  const double eta = std::max(1.5, o.eta);
  for (double s = static_cast<double>(o.short_steps) * eta; s < static_cast<double>(o.long_steps); s *= eta)
    steps.push_back(static_cast<int64_t>(std::llround(s)));
  steps.push_back(o.long_steps);
  return steps;
}

std::vector<TunePoint> grid_points(const TuneSpace& space) {
  std::vector<TunePoint> out;
  const size_t n = space.grid_size();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TunePoint p(space.axes.size());
    size_t rest = i;
    for (size_t a = space.axes.size(); a-- > 0;) {
      p[a] = static_cast<int>(rest % space.axes[a].values.size());
      rest /= space.axes[a].values.size();
    }
    out.push_back(std::move(p));
  }
  return out;
}

TuneResult search(const config::TrialConfig& base, const TuneSpace& space, const TuneOptions& options,
                  const Feasible& feasible, const Lookup& lookup, const PredictedOrder& predicted) {
  if (space.axes.empty()) throw std::invalid_argument("the search space has no axis");
  if (options.finalists < 1) throw std::invalid_argument("autotune needs at least one finalist");
  return Search(base, space, options, feasible, lookup, predicted).run();
}

nlohmann::json to_json(const TuneSpace& space) {
  auto j = nlohmann::json::array();
  for (const auto& a : space.axes) {
    auto values = nlohmann::json::array();
    for (const auto& v : a.values) {
      auto ch = nlohmann::json::array();
      for (const auto& c : v.changes) ch.push_back({{"key", c.key}, {"value", c.value}});
      values.push_back({{"label", v.label}, {"changes", ch}});
    }
    j.push_back({{"name", a.name}, {"values", values}});
  }
  return j;
}

TuneSpace space_from_json(const nlohmann::json& j) {
  TuneSpace s;
  for (const auto& a : j) {
    TuneAxis axis{a.at("name").get<std::string>(), {}};
    for (const auto& v : a.at("values")) {
      TuneValue tv{v.at("label").get<std::string>(), {}};
      for (const auto& c : v.at("changes")) tv.changes.push_back({c.at("key"), c.at("value")});
      axis.values.push_back(tv);
    }
    s.axes.push_back(axis);
  }
  return s;
}

std::optional<Evaluated> cheapest_within(const std::vector<Evaluated>& finalists, double within, std::string* why) {
  if (finalists.empty()) return std::nullopt;
  const auto fastest = *std::max_element(finalists.begin(), finalists.end(), [](const Evaluated& a, const Evaluated& b) {
    return a.m.objective < b.m.objective;
  });
  const double floor = fastest.m.objective * (1.0 - within);
  std::optional<Evaluated> cheapest;
  for (const auto& e : finalists) {
    if (e.m.objective < floor) continue;
    if (!e.m.tokens_per_joule) {
      if (why)
        *why = "the fastest: a finalist within " + std::to_string(static_cast<int>(within * 100 + 0.5)) +
               " % has no energy figure (" + (e.m.energy_problem.empty() ? std::string("unknown") : e.m.energy_problem) + ")";
      return fastest;
    }
    if (!cheapest || *e.m.tokens_per_joule > *cheapest->m.tokens_per_joule) cheapest = e;
  }
  if (why) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "the most tokens per joule (%.1f) of the finalists within %.0f %% of the fastest (%.0f)",
                  *cheapest->m.tokens_per_joule, within * 100, fastest.m.objective);
    *why = buf;
  }
  return cheapest;
}

}  // namespace tunebench::investigate
