#include "core/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"
#include "core/config/known_settings.h"

namespace tunebench::analysis {

namespace {

using Getter = std::optional<Spread> (*)(const TrialMetrics&);

struct MetricDef {
  const char* key;
  const char* label;
  const char* unit;
  Better better;
  Getter get;
};

std::optional<Spread> some(const Spread& s) { return s.n > 0 ? std::optional<Spread>(s) : std::nullopt; }
std::optional<Spread> value(const std::optional<double>& v, double k = 1.0) {
  return v ? std::optional<Spread>(spread_of_value(*v * k)) : std::nullopt;
}
// A figure known within a relative bound (energy, metrics/energy.h): its quartiles span the bound,
// so two trials are told apart only beyond it.
std::optional<Spread> within_bound(const std::optional<double>& v, double bound) {
  if (!v) return std::nullopt;
  Spread s = spread_of_value(*v);
  s.p25 = *v * (1.0 - bound);
  s.p75 = *v * (1.0 + bound);
  return s;
}

const MetricDef kMetrics[] = {
    {"step_ms", "Step time", "ms", Better::Lower, [](const TrialMetrics& m) { return some(m.step_ms); }},
    {"tokens_per_step", "Tokens per step (all {ranks})", "tokens", Better::Neither,
     [](const TrialMetrics& m) {
       return m.measured_steps && m.tokens_per_step > 0 ? value(m.tokens_per_step) : std::nullopt;
     }},
    {"tokens_per_s_per_gpu", "Throughput per {rank}", "tokens/s", Better::Higher,
     [](const TrialMetrics& m) { return m.tokens_per_step > 0 ? some(m.tokens_per_s_per_gpu) : std::nullopt; }},
    {"tokens_per_s_total", "Throughput total", "tokens/s", Better::Higher,
     [](const TrialMetrics& m) { return m.tokens_per_step > 0 ? some(m.tokens_per_s_total) : std::nullopt; }},
    // A model counted in samples (samples_per_step given, e.g. an imported CNN trace).
    {"samples_per_step", "Samples per step (all {ranks})", "samples", Better::Neither,
     [](const TrialMetrics& m) {
       return m.measured_steps && m.samples_per_step > 0 ? value(m.samples_per_step) : std::nullopt;
     }},
    {"samples_per_s_per_gpu", "Throughput per {rank}", "samples/s", Better::Higher,
     [](const TrialMetrics& m) { return m.samples_per_step > 0 ? some(m.samples_per_s_per_gpu) : std::nullopt; }},
    {"samples_per_s_total", "Throughput total", "samples/s", Better::Higher,
     [](const TrialMetrics& m) { return m.samples_per_step > 0 ? some(m.samples_per_s_total) : std::nullopt; }},
    {"mfu", "MFU", "%", Better::Higher, [](const TrialMetrics& m) { return value(m.mfu, 100.0); }},
    {"comm_ms", "Communication", "ms", Better::Lower,
     [](const TrialMetrics& m) { return m.world_size > 1 ? some(m.comm_ms) : std::nullopt; }},
    {"exposed_comm_ms", "Exposed communication", "ms", Better::Lower,
     [](const TrialMetrics& m) { return m.world_size > 1 ? some(m.exposed_comm_ms) : std::nullopt; }},
    {"hidden_pct", "Communication hidden", "%", Better::Higher,
     [](const TrialMetrics& m) { return value(m.hidden_fraction, 100.0); }},
    {"busbw_gbps", "Bus bandwidth", "GB/s", Better::Higher, [](const TrialMetrics& m) { return value(m.busbw_gbps); }},
    {"grad_gb_per_step", "Gradient traffic per step", "GB", Better::Neither,
     [](const TrialMetrics& m) {
       return m.grad_bytes_per_step > 0 ? value(static_cast<double>(m.grad_bytes_per_step) / 1e9) : std::nullopt;
     }},
    {"comm_floor_ms", "Communication floor", "ms", Better::Lower,
     [](const TrialMetrics& m) { return value(m.comm_floor_ms); }},
    {"data_wait_ms", "Data wait", "ms", Better::Lower, [](const TrialMetrics& m) { return some(m.data_wait_ms); }},
    {"peak_gib", "Peak memory", "GiB", Better::Lower,
     [](const TrialMetrics& m) {
       return m.peak_bytes > 0 ? value(static_cast<double>(m.peak_bytes) / (1024.0 * 1024.0 * 1024.0)) : std::nullopt;
     }},
    {"gpu_util_pct", "GPU utilisation", "%", Better::Higher,
     [](const TrialMetrics& m) { return value(m.gpu_util_pct); }},
    {"cpu_use_pct", "CPU use, all ranks (100 = one core)", "%", Better::Neither,
     [](const TrialMetrics& m) { return value(m.cpu_use_pct); }},
    {"rss_gib", "Resident memory, largest rank", "GiB", Better::Neither,
     [](const TrialMetrics& m) {
       return m.rss_peak_bytes > 0 ? value(static_cast<double>(m.rss_peak_bytes) / (1024.0 * 1024.0 * 1024.0))
                                   : std::nullopt;
     }},
    {"sm_activity_pct", "SM activity (GPM)", "%", Better::Higher,
     [](const TrialMetrics& m) { return value(m.sm_activity_pct); }},
    {"tensor_activity_pct", "Tensor-core activity (GPM)", "%", Better::Higher,
     [](const TrialMetrics& m) { return value(m.tensor_activity_pct); }},
    {"joules_per_step", "Energy per step (all GPUs)", "J", Better::Lower,
     [](const TrialMetrics& m) { return within_bound(m.joules_per_step, m.energy_error_bound); }},
    {"tokens_per_joule", "Tokens per joule", "tokens/J", Better::Higher,
     [](const TrialMetrics& m) { return within_bound(m.tokens_per_joule, m.energy_error_bound); }},
    {"gpu_busy_pct", "GPU busy (kernels)", "%", Better::Higher,
     [](const TrialMetrics& m) { return value(m.gpu_busy_share, 100.0); }},
    {"gpu_idle_ms", "GPU idle (host wait, launch, sync, dependency)", "ms", Better::Lower,
     [](const TrialMetrics& m) {
       return m.gpu_busy_share ? value(m.breakdown.idle_ms() + m.breakdown[Part::DependencyWait])
                               : std::optional<Spread>();
     }},
};

}  // namespace

Standing standing(const MetricRow& row, size_t trial) {
  if (row.better == Better::Neither || trial >= row.ratio.size() || !row.ratio[trial]) return Standing::Neither;
  if (trial >= row.beyond_noise.size() || !row.beyond_noise[trial]) return Standing::Neither;
  const bool higher = *row.ratio[trial] > 1.0;
  return (row.better == Better::Higher) == higher ? Standing::Better : Standing::Worse;
}

bool beyond_noise(const Spread& base, const Spread& other, std::string_view unit, const TrialMetrics& base_trial,
                  const TrialMetrics& other_trial) {
  const double d = std::abs(other.median - base.median);
  if (base.median == 0 && other.median == 0) return false;
  if (d <= kNoiseRatio * std::max(std::abs(base.median), std::abs(other.median))) return false;
  // Each side's own spread (interquartile range) is its run-to-run noise; the quartile ranges
  // must not overlap.
  if (d <= std::max(base.p75 - base.p25, other.p75 - other.p25)) return false;
  if (std::max(base.p25, other.p25) <= std::min(base.p75, other.p75)) return false;
  // A time too small to matter against the step (0.1 ms vs 0.3 ms of a 270 ms step) is not a
  // regression however large its ratio.
  if (unit == "ms") {
    const double step = std::max(base_trial.step_ms.median, other_trial.step_ms.median);
    if (step > 0 && std::max(base.median, other.median) < kNoiseStepShare * step) return false;
  }
  return true;
}

std::vector<TrialMetrics> analyze_grouped(const std::vector<protocol::TrialLog>& logs,
                                          const std::vector<std::string>& names) {
  std::vector<std::vector<const protocol::TrialLog*>> groups;
  std::vector<std::optional<config::TrialConfig>> keys;
  std::vector<std::map<std::string, std::string>> switches;  // a switch that changes speed makes another configuration
  std::vector<size_t> first;  // index of each group's first log
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& log = logs[i];
    std::optional<config::TrialConfig> cfg;
    // A config with unknown knobs (an imported trace) stands alone: equal known knobs say nothing
    // about the unknown ones, so two such trials are not repeats of one configuration.
    if (const auto j = log.config(); j.is_object() && config::unknown_knobs(j).empty())
      cfg = config::from_json(j).config;
    const auto env_switches = environment_switches(log);
    bool placed = false;
    for (size_t g = 0; g < groups.size() && cfg; ++g)
      if (keys[g] && config::differing_knobs(*keys[g], *cfg).empty() && switches[g] == env_switches) {
        groups[g].push_back(&log);
        placed = true;
        break;
      }
    if (!placed) {
      groups.push_back({&log});
      keys.push_back(cfg);
      switches.push_back(env_switches);
      first.push_back(i);
    }
  }
  std::vector<TrialMetrics> out;
  for (size_t g = 0; g < groups.size(); ++g) {
    out.push_back(analyze_pooled(groups[g]));
    if (first[g] < names.size() && !names[first[g]].empty()) out.back().label = names[first[g]];
  }
  return out;
}

size_t default_baseline(const std::vector<TrialMetrics>& trials) {
  std::optional<size_t> best;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trials[i].world_size == 1 && trials[i].measured_steps > 0 &&
        (!best || trials[i].measured_steps > trials[*best].measured_steps))
      best = i;
  return best.value_or(0);
}

Comparison compare(std::vector<TrialMetrics> trials, size_t baseline) {
  Comparison c;
  c.trials = std::move(trials);
  const size_t n = c.trials.size();
  c.baseline = n == 0 ? 0 : std::min(baseline, n - 1);
  if (n == 0) return c;

  // Config diff: union over every pair with the baseline and between the others, in knobs() order.
  // A knob one trial knows and another does not differs too ("unknown" in the latter's column).
  std::set<std::string> differing;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const TrialMetrics& a = c.trials[i];
      const TrialMetrics& b = c.trials[j];
      if (!a.config || !b.config) continue;
      for (auto& k : config::differing_knobs(*a.config, *b.config))
        if (a.knows({k}) && b.knows({k})) differing.insert(k);
      for (const auto& info : config::knobs())
        if (a.knows({info.key}) != b.knows({info.key})) differing.insert(info.key);
    }
  for (const auto& info : config::knobs()) {
    if (!differing.count(info.key)) continue;
    KnobDiff d{info.key, info.label, {}};
    for (const auto& t : c.trials)
      d.values.push_back(!t.config ? "" : t.knows({info.key}) ? config::knob_text(*t.config, info.key) : "unknown");
    c.config_diff.push_back(std::move(d));
  }
  // The environment switches (TUNEBENCH_*) that differ: they change what a trial measures as a
  // knob does. A trial without one says "unset".
  std::set<std::string> switch_names;
  for (const auto& t : c.trials)
    for (const auto& [name, value] : t.switches) switch_names.insert(name);
  for (const auto& name : switch_names) {
    KnobDiff d{name, "switch " + name, {}};
    for (const auto& t : c.trials) {
      const auto it = t.switches.find(name);
      d.values.push_back(it == t.switches.end() ? "unset" : it->second);
    }
    if (std::adjacent_find(d.values.begin(), d.values.end(), std::not_equal_to<>()) != d.values.end())
      c.config_diff.push_back(std::move(d));
  }

  // "GPU" when every trial ran on GPUs, "CPU rank" when every one ran on the CPU, else "rank".
  const bool all_gpu = std::all_of(c.trials.begin(), c.trials.end(), [](const TrialMetrics& t) { return on_gpu(t); });
  const bool all_cpu = std::none_of(c.trials.begin(), c.trials.end(), [](const TrialMetrics& t) { return on_gpu(t); });
  const std::string rank_noun = all_gpu ? "GPU" : all_cpu ? "CPU rank" : "rank";
  auto label_of = [&](std::string label) {
    for (const auto& [placeholder, word] : {std::pair<std::string, std::string>{"{ranks}", rank_noun + "s"},
                                            std::pair<std::string, std::string>{"{rank}", rank_noun}})
      if (const auto at = label.find(placeholder); at != std::string::npos) label.replace(at, placeholder.size(), word);
    return label;
  };
  const TrialMetrics& base = c.trials[c.baseline];
  for (const auto& def : kMetrics) {
    MetricRow row{def.key, label_of(def.label), def.unit, def.better, {}, {}, {}, {}, {}, {}};
    const auto b = def.get(base);
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      const auto v = def.get(c.trials[i]);
      any = any || v.has_value();
      row.values.push_back(v);
      // Values that both show as zero have no ratio and no direction: "–", never 0.88x.
      const bool both = i != c.baseline && v && b &&
                        !(shows_as_zero(v->median, def.unit) && shows_as_zero(b->median, def.unit));
      row.delta.push_back(both ? std::optional<double>(v->median - b->median) : std::nullopt);
      row.ratio.push_back(both && b->median != 0 ? std::optional<double>(v->median / b->median) : std::nullopt);
      row.ratio_low.push_back(both && b->p75 != 0 ? std::optional<double>(v->p25 / b->p75) : std::nullopt);
      row.ratio_high.push_back(both && b->p25 != 0 ? std::optional<double>(v->p75 / b->p25) : std::nullopt);
      row.beyond_noise.push_back(both && beyond_noise(*b, *v, def.unit, base, c.trials[i]));
    }
    if (any) c.metrics.push_back(std::move(row));
  }

  const size_t single = default_baseline(c.trials);
  if (c.trials[single].world_size == 1 && c.trials[single].measured_steps > 0) c.single_reference = single;
  for (size_t i = 0; i < n; ++i)
    c.scaling_efficiency.push_back(c.single_reference ? scaling_efficiency(c.trials[i], c.trials[*c.single_reference])
                                                      : std::nullopt);
  for (size_t i = 0; i < n; ++i)
    if (i != c.baseline) c.throughput_statements.push_back(throughput_statement(base, c.trials[i]));
  return c;
}

namespace {
// What a trial's steps carry, in the unit both trials of a statement count in: tokens, or samples
// for a model counted in samples (a CNN's images: samples_per_step, throughput.h).
struct Work {
  double per_step = 0;
  const Spread* total = nullptr;
  const Spread* per_gpu = nullptr;
};
Work work_of(const TrialMetrics& m, bool samples) {
  if (samples) return {m.samples_per_step, &m.samples_per_s_total, &m.samples_per_s_per_gpu};
  return {m.tokens_per_step, &m.tokens_per_s_total, &m.tokens_per_s_per_gpu};
}
}  // namespace

std::string throughput_statement(const TrialMetrics& base, const TrialMetrics& other) {
  if (base.measured_steps == 0 || other.measured_steps == 0)
    return other.label + " vs " + base.label + ": no measured steps to compare.";
  const double tb = base.step_ms.median, to = other.step_ms.median;
  const bool tokens_known = base.tokens_per_step > 0 && other.tokens_per_step > 0;
  const bool samples = !tokens_known && base.samples_per_step > 0 && other.samples_per_step > 0;
  if (!tokens_known && !samples) {
    const TrialMetrics& unknown =
        base.tokens_per_step <= 0 && base.samples_per_step <= 0 ? base : other;
    return other.label + " vs " + base.label + ": step " + format_ms(to) + " vs " + format_ms(tb) + " median" +
           "; the work per step of " + unknown.label +
           " is unknown (an imported trace: set micro_batch, seq_len and grad_accum, or samples_per_step for a "
           "model counted in samples), so throughput is not compared.";
  }
  const std::string unit = samples ? "samples" : "tokens";
  const Work b = work_of(base, samples), o = work_of(other, samples);
  const double work_ratio = o.per_step / b.per_step;
  const double total = o.total->median / b.total->median;
  const double per_gpu = o.per_gpu->median / b.per_gpu->median;
  // Step times here are medians, as in the metrics table; the pair diagnosis's step delta is of
  // means (its parts add up) and says "(mean)": each figure names its statistic.
  const std::string steps = format_ms(to) + " vs " + format_ms(tb) + " median, " + (to >= tb ? "+" : "-") +
                            format_pct(std::abs(to / tb - 1.0));
  const std::string counts = format_count(o.per_step) + " vs " + format_count(b.per_step);
  const std::string rates =
      format_count(o.total->median) + " vs " + format_count(b.total->median) + " " + unit + "/s";
  std::string s = other.label + " vs " + base.label + ": ";
  if (std::abs(work_ratio - 1.0) < 1e-9) {
    s += "the same " + unit + " per step (" + format_count(b.per_step) + "), step " + steps +
         ", so total throughput is " + format_ratio(total) + " (" + rates + ")";
  } else {
    const bool slower_but_more = to > tb && total > 1.0;
    s += slower_but_more ? "the step is slower (" + steps + ") but carries " : "step " + steps + ", carrying ";
    s += format_ratio(work_ratio) + " the " + unit + " (" + counts + "), so total throughput is " +
         format_ratio(total) + " (" + rates + ")";
    if (slower_but_more) s += ": slower steps, more work done";
  }
  const std::string per = "per " + device_noun(other);
  s += "; " + per + " " + format_ratio(per_gpu) + " (" + format_count(o.per_gpu->median) + " vs " +
       format_count(b.per_gpu->median) + " " + unit + "/s " + per + ").";
  return s;
}

}  // namespace tunebench::analysis
