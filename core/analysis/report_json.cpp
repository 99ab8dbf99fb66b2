// The JSON rendering of a report: every number in its unit, for scripts and `--json`.
// Keys follow docs/ANALYSIS.md; optional figures that are unknown are null, never 0.
#include <nlohmann/json.hpp>

#include "core/analysis/report.h"

namespace tunebench::analysis {

namespace {

using nlohmann::json;

// The collective split (collective_split.h); null without one.
json collectives_json(const TrialMetrics& m) {
  if (!m.collectives) return nullptr;
  const auto& c = *m.collectives;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"collectives", c.collectives},
          {"steps", c.steps},
          {"unmatched_steps", c.unmatched_steps},
          {"kind", c.kind},
          {"last_rank", c.last_rank},
          {"last_counts", c.last_counts},
          {"others_wait_ms_per_step", c.others_wait_ms_per_step},
          {"transfer_ms_per_step", c.transfer_ms_per_step},
          {"transfer_busbw_gbps", opt(c.transfer_busbw_gbps)},
          {"link_busbw_gbps", opt(c.link_busbw_gbps)},
          {"link", c.link_name},
          {"mean_lateness_ms", c.mean_lateness_ms},
          {"sentence", collective_split_sentence(c)}};
}

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json to_json(const Spread& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n},       {"median", s.median}, {"p25", s.p25}, {"p75", s.p75},
          {"mean", s.mean}, {"min", s.min},       {"max", s.max}};
}

json to_json(const MeanBreakdown& b) {
  json j = json::object();
  for (Part p : kAllParts)
    j[std::string(to_string(p)) + "_ms"] = b[p];
  j["step_ms"] = b.step_ms;
  j["comm_ms"] = b.comm_ms;
  j["recompute_ms"] = b.recompute_ms;
  j["compute_ms"] = b.compute_ms;
  return j;
}

// The config as the trial knows it: unknown knobs (an imported trace) are left out, not defaulted.
json config_json(const TrialMetrics& m) {
  if (!m.config) return nullptr;
  json j = config::to_json(*m.config);
  for (const auto& k : m.unknown_knobs) j.erase(k);
  return j;
}

json to_json(const TrialMetrics& m) {
  json ranks = json::array();
  for (const auto& r : m.ranks)
    ranks.push_back({{"rank", r.rank}, {"step_ms", to_json(r.step_ms)}, {"breakdown", to_json(r.breakdown)}});
  return {{"trial", m.trial},
          {"label", m.label},
          {"repeats", m.repeat_ids},
          {"config", config_json(m)},
          {"world_size", m.world_size},
          {"device", m.device},
          {"device_memory_bytes", m.device_memory_bytes},
          {"parameters", m.parameters},
          {"measured_steps", m.measured_steps},
          {"sampled_steps", m.sampled_steps},
          {"gpu_busy_share", opt(m.gpu_busy_share)},
          {"host_wait_ops", m.host_wait_ops},
          {"sync_ops", m.sync_ops},
          {"dependency_ops", m.dependency_ops},
          {"collectives", collectives_json(m)},
          {"samples_representative", m.sample_use == SampleUse::NotRepresentative ? json(false)
                                     : m.sample_use == SampleUse::None            ? json(nullptr)
                                                                                 : json(true)},
          {"step_ms", to_json(m.step_ms)},
          {"tokens_per_step", m.tokens_per_step},
          {"tokens_per_s_total", to_json(m.tokens_per_s_total)},
          {"tokens_per_s_per_gpu", to_json(m.tokens_per_s_per_gpu)},
          {"flops_per_token", opt(m.flops_per_token)},
          {"peak_tflops", opt(m.peak_tflops)},
          {"mfu", opt(m.mfu)},
          {"breakdown", to_json(m.breakdown)},
          {"ranks", ranks},
          {"comm_ms", to_json(m.comm_ms)},
          {"exposed_comm_ms", to_json(m.exposed_comm_ms)},
          {"data_wait_ms", to_json(m.data_wait_ms)},
          {"hidden_fraction", opt(m.hidden_fraction)},
          {"busbw_gbps", opt(m.busbw_gbps)},
          {"grad_bytes_per_step", m.grad_bytes_per_step},
          {"comm_bytes_per_step", m.comm_bytes_per_step},
          {"bus_bytes_per_step", m.bus_bytes_per_step},
          {"comm_floor_ms", opt(m.comm_floor_ms)},
          {"peak_bytes", m.peak_bytes},
          {"alloc_retries", m.alloc_retries},
          {"peak_fraction", opt(m.peak_fraction)},
          {"gpu_util_pct", opt(m.gpu_util_pct)},
          {"joules_per_step", opt(m.joules_per_step)},
          {"tokens_per_joule", opt(m.tokens_per_joule)},
          {"energy_error_bound", m.energy_error_bound},
          {"energy_problem", m.energy_problem},
          {"sm_activity_pct", opt(m.sm_activity_pct)},
          {"tensor_activity_pct", opt(m.tensor_activity_pct)},
          {"activity_problem", m.activity_problem},
          {"errors", m.errors},
          {"oom", m.oom},
          {"representative_step", m.representative_step},
          {"notes", m.notes}};
}

json to_json(const Finding& f) {
  json suggestions = json::array();
  for (const auto& s : f.suggestions) {
    json changes = json::object();
    for (const auto& c : s.changes)
      changes[c.key] = c.value;
    suggestions.push_back({{"title", s.title}, {"changes", changes}, {"why", s.why}});
  }
  return {{"kind", std::string(to_string(f.kind))},
          {"title", f.title},
          {"detail", f.detail},
          {"impact_ms", f.impact_ms},
          {"share", f.share},
          {"blocking", f.blocking},
          {"suggestions", suggestions}};
}

json to_json(const std::vector<Finding>& fs) {
  json a = json::array();
  for (const auto& f : fs)
    a.push_back(to_json(f));
  return a;
}

json to_json(const FeasibilityModel& f) {
  return {{"world_size", f.world_size},
          {"compute_ms", f.compute_ms},
          {"floor_ms", f.floor_ms},
          {"busbw_gbps", f.busbw_gbps},
          {"backward_ms", f.backward_ms},
          {"exposed_min_ms", f.exposed_min_ms},
          {"speedup_no_overlap", f.speedup_no_overlap},
          {"speedup_full_overlap", f.speedup_full_overlap},
          {"speedup_measured", f.speedup_measured},
          {"can_beat_single", f.can_beat_single},
          {"accum_for_90pct", f.accum_for_90pct},
          {"statement", f.statement}};
}

}  // namespace

json render_json(const Report& report) {
  const Comparison& c = report.comparison;
  json trials = json::array();
  for (const auto& t : c.trials)
    trials.push_back(to_json(t));
  json diff = json::array();
  for (const auto& d : c.config_diff)
    diff.push_back({{"key", d.key}, {"label", d.label}, {"values", d.values}});
  json metrics = json::array();
  for (const auto& m : c.metrics) {
    json values = json::array(), delta = json::array(), ratio = json::array(), lo = json::array(), hi = json::array();
    for (size_t i = 0; i < m.values.size(); ++i) {
      values.push_back(m.values[i] ? to_json(*m.values[i]) : json(nullptr));
      delta.push_back(opt(m.delta[i]));
      ratio.push_back(opt(m.ratio[i]));
      lo.push_back(opt(m.ratio_low[i]));
      hi.push_back(opt(m.ratio_high[i]));
    }
    const char* better = m.better == Better::Lower ? "lower" : m.better == Better::Higher ? "higher" : "neither";
    metrics.push_back({{"key", m.key},
                       {"label", m.label},
                       {"unit", m.unit},
                       {"better", better},
                       {"values", values},
                       {"delta", delta},
                       {"ratio", ratio},
                       {"ratio_low", lo},
                       {"ratio_high", hi}});
  }
  json efficiency = json::array();
  for (const auto& e : c.scaling_efficiency)
    efficiency.push_back(opt(e));
  json diagnoses = json::array();
  for (const auto& d : report.diagnoses)
    diagnoses.push_back(
        {{"trial", d.trial}, {"label", d.label}, {"verdict", d.verdict}, {"findings", to_json(d.findings)}});
  json pairs = json::array();
  for (const auto& p : report.pairs) {
    json deltas = json::object();
    for (const auto& d : p.deltas)
      deltas[std::string(to_string(d.part)) + "_ms"] = d.delta_ms;
    pairs.push_back({{"base", p.base_label},
                     {"other", p.other_label},
                     {"step_delta_ms", p.step_delta_ms},
                     {"part_deltas", deltas},
                     {"headline", p.headline},
                     {"throughput", p.throughput},
                     {"scaling_efficiency", opt(p.scaling_efficiency)},
                     {"feasibility", p.feasibility ? to_json(*p.feasibility) : json(nullptr)},
                     {"findings", to_json(p.findings)}});
  }
  return {{"baseline", c.baseline},
          {"trials", trials},
          {"config_diff", diff},
          {"metrics", metrics},
          {"single_reference", opt(c.single_reference)},
          {"scaling_efficiency", efficiency},
          {"throughput_statements", c.throughput_statements},
          {"diagnoses", diagnoses},
          {"pairs", pairs}};
}

json render_json(const SweepTable& table) {
  json rows = json::array();
  for (const auto& r : table.rows)
    rows.push_back({{"values", r.values},
                    {"repeats", r.repeats},
                    {"failed", r.failed},
                    {"step_ms", to_json(r.step_ms)},
                    {"tokens_per_s_per_gpu", to_json(r.tokens_per_s_per_gpu)},
                    {"tokens_per_s_total", to_json(r.tokens_per_s_total)},
                    {"mfu", opt(r.mfu)},
                    {"exposed_comm_ms", to_json(r.exposed_comm_ms)},
                    {"peak_bytes", r.peak_bytes},
                    {"tokens_per_joule", opt(r.tokens_per_joule)}});
  return {{"keys", table.keys}, {"rows", rows}};
}

}  // namespace tunebench::analysis
