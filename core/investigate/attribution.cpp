#include "core/investigate/attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"
#include "core/analysis/step_time.h"

namespace tunebench::investigate {
namespace {

using analysis::Part;

std::string pct(double ratio) {
  char b[32];
  std::snprintf(b, sizeof(b), "%+.1f %%", (ratio - 1.0) * 100.0);
  return b;
}

std::string fixed(double v, int digits) {
  char b[48];
  std::snprintf(b, sizeof(b), "%.*f", digits, v);
  return b;
}

// The part that moved most between the baseline and the variant, at the baseline's work per step.
void phase_moved(const analysis::TrialMetrics& base, const analysis::TrialMetrics& var, double work, FactorRow& row) {
  double best = 0;
  for (Part p : analysis::kAllParts) {
    const double d = var.breakdown[p] * work - base.breakdown[p];
    if (std::abs(d) > std::abs(best)) {
      best = d;
      row.phase_moved = std::string(analysis::label(p));
    }
  }
  row.phase_delta_ms = best;
}

int rank_class(const FactorRow& r) {
  if (r.failed) return 3;
  if (r.effect.beyond_noise && r.effect.ratio > 1) return 0;
  if (!r.effect.beyond_noise) return 1;
  return 2;
}

std::string interval(const Effect& e) { return "[" + pct(e.low) + ", " + pct(e.high) + "]"; }

std::string verdict_of(const InvestigationPlan& plan, const Attribution& a) {
  std::string out;
  const auto& b = a.baseline;
  if (b.measured_steps == 0) return "The baseline has no measured step yet: nothing can be attributed.";
  // Why it is slow: the two largest parts of the baseline's step.
  std::vector<std::pair<double, Part>> parts;
  for (Part p : analysis::kAllParts) parts.push_back({b.breakdown[p], p});
  std::sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  out += "Baseline: " + analysis::format_ms(b.step_ms.median) + " per step, " +
         fixed(analysis::work_rate(b).per_gpu.median, 0) + " " + analysis::work_rate(b).unit + "/s per " + analysis::device_noun(b) + " (" + std::to_string(a.baseline_repeats) +
         " runs, run-to-run noise " + fixed(a.noise_floor * 100, 1) + " %). ";
  out += "The step is mostly " + std::string(analysis::label(parts[0].second)) + " (" +
         analysis::format_ms(parts[0].first) + ", " + analysis::format_pct(parts[0].first / b.breakdown.step_ms) + ")";
  if (parts[1].first > 0)
    out += " and " + std::string(analysis::label(parts[1].second)) + " (" + analysis::format_ms(parts[1].first) + ", " +
           analysis::format_pct(parts[1].first / b.breakdown.step_ms) + ")";
  out += ". ";
  std::vector<const FactorRow*> faster, noise, slower, failed;
  for (const auto& r : a.factors) {
    if (r.failed) failed.push_back(&r);
    else if (!r.effect.beyond_noise) noise.push_back(&r);
    else (r.effect.ratio > 1 ? faster : slower).push_back(&r);
  }
  if (!faster.empty()) {
    const auto& w = *faster.front();
    out += "What fixes it: " + w.title + " (" + std::string(to_string(w.category)) + "): " + analysis::work_rate(b).unit + "/s " + pct(w.effect.ratio) +
           " (95 % interval " + interval(w.effect) + "), step " + analysis::format_ms(b.step_ms.median) + " -> " +
           analysis::format_ms(w.step_ms_equal_work) + " at equal work";
    if (!w.phase_moved.empty())
      out += ", " + w.phase_moved + " " + (w.phase_delta_ms < 0 ? "-" : "+") +
             analysis::format_ms(std::abs(w.phase_delta_ms));
    out += ". ";
    for (size_t i = 1; i < faster.size(); ++i)
      out += (i == 1 ? "Also faster: " : "; ") + faster[i]->title + " " + pct(faster[i]->effect.ratio);
    if (faster.size() > 1) out += ". ";
  } else if (a.factors.empty()) {
    // Before any variant ran, "no variant is faster" would read as a result.
    out += "No variant has run yet: nothing is attributed. ";
  } else {
    out += "No variant is faster beyond the noise: nothing tried here explains the step time better than chance. ";
  }
  if (!noise.empty()) {
    out += "Within the noise (no effect shown): ";
    for (size_t i = 0; i < noise.size(); ++i) out += (i ? ", " : "") + noise[i]->title + " " + pct(noise[i]->effect.ratio);
    out += ". ";
  }
  if (!slower.empty()) {
    out += "Slower: ";
    for (size_t i = 0; i < slower.size(); ++i)
      out += (i ? ", " : "") + slower[i]->title + " " + pct(slower[i]->effect.ratio);
    out += ". ";
  }
  if (!failed.empty()) {
    out += "Failed: ";
    for (size_t i = 0; i < failed.size(); ++i) out += (i ? ", " : "") + failed[i]->title + " (" + failed[i]->failure + ")";
    out += ". ";
  }
  if (!a.has_communication_factor() && plan.baseline.world_size <= 1)
    out += "No communication factor: a single rank has no communication. ";
  if (!plan.skipped.empty()) out += std::to_string(plan.skipped.size()) + " variants were not run (see the skipped list). ";
  if (!a.not_run.empty()) out += std::to_string(a.not_run.size()) + " planned variants are not measured yet (budget). ";
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

bool Attribution::has_communication_factor() const {
  return std::any_of(factors.begin(), factors.end(), [](const auto& f) { return f.category == Category::Communication; });
}

ArmSamples samples_of(const std::vector<const protocol::TrialLog*>& repeats) {
  ArmSamples s;
  if (repeats.empty()) return s;
  s.work_per_step = analysis::work_rate(analysis::analyze_pooled(repeats)).per_step;
  for (const auto* r : repeats) {  // the step time's one definition, per step (step_time.h)
    for (const auto& [step, ms] : metrics::step_times_ms(*r)) s.step_ms.push_back(ms);
    s.repeat_median_ms.push_back(analysis::trial_step_ms(*r).median);
  }
  return s;
}

Attribution attribute(const InvestigationPlan& plan, const ArmTrials& baseline, const std::vector<ArmTrials>& variants) {
  Attribution a;
  a.baseline_repeats = static_cast<int>(baseline.finished.size());
  const ArmSamples base = samples_of(baseline.finished);
  a.noise_floor = noise_floor(base.repeat_median_ms);
  if (!baseline.finished.empty()) a.baseline = analysis::analyze_pooled(baseline.finished);
  std::map<std::string, const ArmTrials*> by_arm;
  for (const auto& v : variants) by_arm[v.arm] = &v;
  for (const auto& v : plan.variants) {
    const auto it = by_arm.find(v.arm);
    if (it == by_arm.end() || (it->second->finished.empty() && it->second->failures.empty())) {
      a.not_run.push_back(v.title);
      continue;
    }
    const ArmTrials& arm = *it->second;
    FactorRow row;
    row.arm = v.arm;
    row.title = v.title;
    row.source = v.source;
    row.category = v.category;
    row.repeats = static_cast<int>(arm.finished.size() + arm.failures.size());
    if (arm.finished.empty()) {
      row.failed = true;
      row.failure = arm.failures.front();
      a.factors.push_back(row);
      continue;
    }
    const auto m = analysis::analyze_pooled(arm.finished);
    if (m.measured_steps == 0 || a.baseline.measured_steps == 0) {
      row.failed = m.measured_steps == 0;
      row.failure = row.failed ? "no measured steps" : "";
      a.factors.push_back(row);
      continue;
    }
    row.effect = estimate_effect(base, samples_of(arm.finished), a.noise_floor);
    row.step_ms = m.step_ms.median;
    const analysis::WorkRate rate = analysis::work_rate(m);
    const double work = rate.per_step > 0 ? analysis::work_rate(a.baseline).per_step / rate.per_step : 1.0;
    row.step_ms_equal_work = m.step_ms.median * work;
    row.rate_total = rate.total.median;
    row.rate_per_gpu = rate.per_gpu.median;
    row.peak_bytes = m.peak_bytes;
    phase_moved(a.baseline, m, work, row);
    a.factors.push_back(row);
  }
  std::stable_sort(a.factors.begin(), a.factors.end(), [](const FactorRow& x, const FactorRow& y) {
    const int cx = rank_class(x), cy = rank_class(y);
    if (cx != cy) return cx < cy;
    if (cx == 1) return std::abs(x.effect.ratio - 1) > std::abs(y.effect.ratio - 1);
    return x.effect.ratio > y.effect.ratio;
  });
  a.verdict = verdict_of(plan, a);
  return a;
}

nlohmann::json to_json(const Attribution& a) {
  nlohmann::json j;
  // Throughput in the unit the baseline counts: tokens_per_s_*, or samples_per_s_* (analysis::work_rate).
  const analysis::WorkRate rate = analysis::work_rate(a.baseline);
  const std::string unit = rate.unit;
  j["unit"] = unit;
  j["baseline"] = {{"repeats", a.baseline_repeats},
                   {"step_ms", a.baseline.step_ms.median},
                   {unit + "_per_s_total", rate.total.median},
                   {unit + "_per_s_per_gpu", rate.per_gpu.median},
                   {"peak_bytes", a.baseline.peak_bytes},
                   {"trials", a.baseline.repeat_ids}};
  j["noise_floor"] = a.noise_floor;
  j["factors"] = nlohmann::json::array();
  for (const auto& f : a.factors)
    j["factors"].push_back({{"arm", f.arm},
                            {"title", f.title},
                            {"category", to_string(f.category)},
                            {"source", f.source},
                            {"repeats", f.repeats},
                            {"failed", f.failed},
                            {"failure", f.failure},
                            {"effect", f.effect.ratio - 1.0},
                            {"effect_low", f.effect.low - 1.0},
                            {"effect_high", f.effect.high - 1.0},
                            {"beyond_noise", f.effect.beyond_noise},
                            {"step_ms", f.step_ms},
                            {"step_ms_equal_work", f.step_ms_equal_work},
                            {unit + "_per_s_total", f.rate_total},
                            {unit + "_per_s_per_gpu", f.rate_per_gpu},
                            {"peak_bytes", f.peak_bytes},
                            {"peak_delta_bytes", f.peak_bytes - a.baseline.peak_bytes},
                            {"phase_moved", f.phase_moved},
                            {"phase_delta_ms", f.phase_delta_ms}});
  j["not_run"] = a.not_run;
  j["verdict"] = a.verdict;
  return j;
}

std::string render(const Attribution& a) {
  char header[200];
  std::snprintf(header, sizeof(header), "rank  factor                          category       runs  %9s  95 %% interval       "
                "noise?  step@work  phase moved             peak\n", (std::string(analysis::work_rate(a.baseline).unit) + "/s").c_str());
  std::string out = header;
  int i = 0;
  for (const auto& f : a.factors) {
    char line[512];
    if (f.failed) {
      std::snprintf(line, sizeof(line), "%4d  %-30.30s  %-13s  %4d  failed: %s\n", ++i, f.title.c_str(),
                    std::string(to_string(f.category)).c_str(), f.repeats, f.failure.c_str());
    } else {
      std::snprintf(line, sizeof(line), "%4d  %-30.30s  %-13s  %4d  %9s  %-18s  %-6s  %9s  %-22.22s  %s\n", ++i,
                    f.title.c_str(), std::string(to_string(f.category)).c_str(), f.repeats, pct(f.effect.ratio).c_str(),
                    interval(f.effect).c_str(), f.effect.beyond_noise ? "beyond" : "within",
                    analysis::format_ms(f.step_ms_equal_work).c_str(),
                    (f.phase_moved + " " + (f.phase_delta_ms < 0 ? "-" : "+") +
                     analysis::format_ms(std::abs(f.phase_delta_ms)))
                        .c_str(),
                    analysis::format_gib(static_cast<double>(f.peak_bytes)).c_str());
    }
    out += line;
  }
  out += "\n" + a.verdict + "\n";
  return out;
}

}  // namespace tunebench::investigate
