#include "core/analysis/sweep.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace tunebench::analysis {

namespace {

std::string coordinates(const std::vector<std::string>& keys, const std::vector<std::string>& values) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i)
    s += (i ? ", " : "") + keys[i] + "=" + values[i];
  return s;
}

bool numeric(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0';
}

bool value_less(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (numeric(a, x) && numeric(b, y)) return x < y;
  return a < b;
}

}  // namespace

SweepPlan plan_sweep(const SweepSpec& spec) {
  SweepPlan plan;
  if (spec.repeats < 1) plan.spec_problems.push_back({"", "repeat count must be at least 1"});
  std::vector<std::string> keys;
  for (const auto& axis : spec.axes) {
    if (!config::find_knob(axis.key)) plan.spec_problems.push_back({axis.key, "unknown knob '" + axis.key + "'"});
    if (axis.values.empty()) plan.spec_problems.push_back({axis.key, "no values to sweep"});
    keys.push_back(axis.key);
  }
  if (spec.axes.empty()) plan.spec_problems.push_back({"", "a sweep needs at least one knob"});
  if (!plan.spec_problems.empty()) return plan;

  plan.grid_size = 1;
  for (const auto& axis : spec.axes)
    plan.grid_size *= axis.values.size();
  std::vector<size_t> index(spec.axes.size(), 0);
  for (size_t point = 0; point < plan.grid_size; ++point) {
    std::vector<std::string> values;
    config::TrialConfig c = spec.base;
    std::vector<config::Problem> problems;
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      values.push_back(spec.axes[a].values[index[a]]);
      if (auto p = config::set_knob(c, spec.axes[a].key, values.back())) problems.push_back(*p);
    }
    if (problems.empty()) problems = config::validate(c);
    if (!problems.empty()) {
      plan.invalid.push_back({values, problems});
    } else {
      const std::string where = " [" + coordinates(keys, values) + "]";
      for (int r = 0; r < spec.repeats; ++r) {
        SweepPoint p{values, r, c};
        p.config.name = spec.base.name + where + (spec.repeats > 1 ? " #" + std::to_string(r + 1) : "");
        plan.trials.push_back(std::move(p));
      }
    }
    // Odometer: the last axis varies fastest.
    for (size_t a = spec.axes.size(); a-- > 0;) {
      if (++index[a] < spec.axes[a].values.size()) break;
      index[a] = 0;
    }
  }
  return plan;
}

SweepTable sweep_table(const std::vector<TrialMetrics>& trials, const std::vector<std::string>& keys) {
  SweepTable t;
  t.keys = keys;
  std::map<std::vector<std::string>, std::vector<const TrialMetrics*>> groups;
  for (const auto& m : trials) {
    if (!m.config) continue;
    std::vector<std::string> values;
    for (const auto& k : keys)
      values.push_back(config::knob_text(*m.config, k));
    groups[values].push_back(&m);
  }
  for (const auto& [values, ms] : groups) {
    // Rows hold already-pooled metrics; several entries with equal values (not pooled upstream)
    // are represented by the one with the most measured steps.
    const TrialMetrics* best = ms.front();
    int repeats = 0;
    for (const auto* m : ms) {
      repeats += static_cast<int>(std::max<size_t>(1, m->repeat_ids.size()));
      if (m->measured_steps > best->measured_steps) best = m;
    }
    SweepRow row;
    row.values = values;
    row.repeats = repeats;
    row.step_ms = best->step_ms;
    row.tokens_per_s_per_gpu = best->tokens_per_s_per_gpu;
    row.tokens_per_s_total = best->tokens_per_s_total;
    row.mfu = best->mfu;
    row.exposed_comm_ms = best->exposed_comm_ms;
    row.peak_bytes = best->peak_bytes;
    row.tokens_per_joule = best->tokens_per_joule;
    row.failed = best->measured_steps == 0;
    t.rows.push_back(std::move(row));
  }
  std::sort(t.rows.begin(), t.rows.end(), [](const SweepRow& a, const SweepRow& b) {
    return std::lexicographical_compare(a.values.begin(), a.values.end(), b.values.begin(), b.values.end(), value_less);
  });
  return t;
}

}  // namespace tunebench::analysis
