#include "core/predict/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/predict/model_shape.h"
#include "core/predict/predictor.h"
#include "core/predict/text.h"

namespace tunebench::predict {

namespace {

// Up to three names, then how many more (the full list is AccuracyRow::basis_trials).
std::string labels(const std::vector<const MeasuredTrial*>& trials) {
  std::string s;
  for (size_t i = 0; i < trials.size() && i < 3; ++i) s += (i ? ", " : "") + trials[i]->label;
  if (trials.size() > 3) s += " and " + std::to_string(trials.size() - 3) + " more";
  return s;
}

bool same_model(const MeasuredTrial& a, const MeasuredTrial& b) { return a.config.dims == b.config.dims; }

// Repeats: configs that differ at most in run length, seed or instrumentation do the same work.
bool same_work(const config::TrialConfig& a, const config::TrialConfig& b) {
  static const std::set<std::string> kRunOnly = {
      "steps", "warmup", "seed", "timing", "kernel_sample_every", "kernel_sample_steps", "gpu_sample_hz",
      "rendezvous_timeout_s", "collective_timeout_s"};
  for (const auto& key : config::differing_knobs(a, b))
    if (!kRunOnly.count(key)) return false;
  return true;
}

AccuracyRow step_row(const char* name, const MeasuredTrial& t, const std::vector<const MeasuredTrial*>& basis,
                     double tolerance, const std::string& basis_text) {
  AccuracyRow r;
  r.case_name = name;
  r.trial = t.label;
  r.basis = basis_text.empty() ? labels(basis) : basis_text;
  for (const auto* b : basis) r.basis_trials.push_back(b->label);
  r.unit = "ms";
  r.tolerance = tolerance;
  const Prediction p = predict_scenario(scenario_of(t), basis);
  r.measured = t.metrics.step_ms.median;
  if (!p.step) {
    r.predicted_text = "no prediction";
    return r;
  }
  r.predicted = p.step->step_ms;
  r.within = std::abs(r.error()) <= tolerance;
  return r;
}

// The step-time targets apply from 1B parameters up: below, per-kernel and per-collective host
// costs (launches, FSDP's per-unit work) weigh more than the FLOPs and bytes the model counts.
bool targeted_size(const MeasuredTrial& t) { return parameter_count(t.config.dims) >= 1'000'000'000; }

}  // namespace

std::vector<AccuracyRow> accuracy_table(const Evidence& ev) {
  std::vector<AccuracyRow> rows;
  const auto& all = ev.trials();

  // ---- memory: every training trial, and every out-of-memory one -------------------------------
  for (const auto& t : all) {
    if (t.probe) continue;
    const Prediction p = predict_scenario(scenario_of(t), {});
    AccuracyRow r;
    r.case_name = "memory";
    r.trial = t.label;
    r.basis = "model only";
    r.unit = "GiB";
    r.tolerance = 0.10;
    r.predicted = static_cast<double>(p.memory.peak_bytes) / kGiB;
    if (t.metrics.oom) {
      r.predicted_text = std::string(to_string(p.fit)) + " (" + fmt("%.0f", p.memory.device_needed_bytes / kGiB) +
                         " of " + fmt("%.0f", p.device_memory_bytes / kGiB) + " GiB)";
      r.measured_text = "out of memory";
      r.within = p.fit == Fit::DoesNotFit;
    } else if (t.metrics.peak_bytes > 0) {
      r.measured = static_cast<double>(t.metrics.peak_bytes) / kGiB;
      r.within = std::abs(r.error()) <= r.tolerance;
    } else {
      continue;
    }
    rows.push_back(r);
  }

  // ---- step time ------------------------------------------------------------------------------
  for (const auto& t : all) {
    if (!t.has_steps() || !t.gpu) continue;
    const auto same_gpu = [&](const MeasuredTrial& o) { return &o != &t && o.gpu == t.gpu; };

    if (t.config.world_size > 1) {
      const auto singles = ev.select([&](const MeasuredTrial& o) {
        return same_gpu(o) && o.has_phases() && o.config.world_size == 1 && same_model(o, t);
      });
      if (!singles.empty()) rows.push_back(step_row("from single", t, singles, targeted_size(t) ? 0.15 : 0.0, ""));

      const auto probes = ev.select([&](const MeasuredTrial& o) { return o.probe && o.transport == t.transport; });
      const auto other_links = ev.select([&](const MeasuredTrial& o) {
        return same_gpu(o) && o.has_phases() && o.config.world_size > 1 && o.transport != t.transport &&
               same_model(o, t) && o.config.strategy == t.config.strategy;
      });
      if (!other_links.empty()) {
        if (!probes.empty()) {
          auto basis = other_links;
          basis.insert(basis.end(), probes.begin(), probes.end());
          // The target is the forum's what-if: a slower link predicted from trials on a faster
          // one plus a probe of the slow one. The other direction is shown without a target.
          const auto* slow = hardware::implied_link(*t.gpu, t.config.nccl_env);
          const auto* fast = hardware::implied_link(*t.gpu, other_links.front()->config.nccl_env);
          const double tolerance = slow && fast && slow->busbw_gbps < fast->busbw_gbps ? 0.15 : 0.0;
          rows.push_back(
              step_row("other link", t, basis, tolerance, labels(other_links) + " + probe " + labels(probes)));
        } else {
          // No probe yet: the catalogue's figure for the implied link stands in, shown without a target.
          const auto* implied = hardware::implied_link(*t.gpu, t.config.nccl_env);
          rows.push_back(step_row(
              "other link", t, other_links, 0.0,
              labels(other_links) + " + catalogue link " + (implied ? implied->id : "?") + " (no probe recorded)"));
        }
      }
    }

    // Other model sizes: predicting down from larger models is the case asked about (1B from 7B); up
    // from smaller ones is shown without a target.
    const auto params_of = [](const MeasuredTrial& m) { return parameter_count(m.config.dims); };
    for (const bool larger : {true, false}) {
      const auto basis = ev.select([&](const MeasuredTrial& o) {
        if (!same_gpu(o) || same_model(o, t)) return false;
        if (o.probe) return true;
        const bool bigger = params_of(o) > params_of(t);
        return o.has_phases() && bigger == larger &&
               (o.config.world_size == 1 || o.config.world_size == t.config.world_size);
      });
      if (std::none_of(basis.begin(), basis.end(), [](const auto* o) { return !o->probe; })) continue;
      const double tolerance = larger && targeted_size(t) ? 0.20 : 0.0;
      rows.push_back(step_row(larger ? "larger size" : "smaller size", t, basis, tolerance, ""));
    }

    const auto others = ev.select([&](const MeasuredTrial& o) {
      return same_gpu(o) && (o.probe || (o.has_phases() && !same_work(o.config, t.config)));
    });
    if (!others.empty()) rows.push_back(step_row("others", t, others, 0.0, "all other trials on " + t.gpu->name));
  }
  return rows;
}

std::string render_accuracy_markdown(const std::vector<AccuracyRow>& rows) {
  std::string s =
      "| case | trial | predicted from | predicted | measured | error | target |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const std::string pred = !r.predicted_text.empty() ? r.predicted_text : fmt("%.1f ", r.predicted) + r.unit;
    const std::string meas = !r.measured_text.empty() ? r.measured_text : fmt("%.1f ", r.measured) + r.unit;
    std::string err = "–";
    if (r.predicted_text.empty() && r.measured_text.empty() && r.measured != 0)
      err = fmt("%+.1f %%", 100.0 * r.error());
    std::string target = "(informational)";
    if (r.tolerance > 0) {
      const bool measured_pair = r.predicted_text.empty() || !r.measured_text.empty();
      target = fmt("±%.0f %% ", 100.0 * r.tolerance) + (measured_pair ? (r.within ? "✔" : "✘") : "n/a");
    }
    s += "| " + r.case_name + " | " + r.trial + " | " + r.basis + " | " + pred + " | " + meas + " | " + err + " | " +
         target + " |\n";
  }
  return s;
}

}  // namespace tunebench::predict
