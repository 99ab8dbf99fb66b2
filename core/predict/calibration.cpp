#include "core/predict/calibration.h"

#include <algorithm>
#include <functional>

#include "core/predict/precision.h"

namespace tunebench::predict {

namespace {

using analysis::Part;

struct Sample {
  const MeasuredTrial* trial;
  StepWork work;
  DeviceRates rates;
  ExecutionMode mode;
  double accum;
  double forward_ms, backward_ms, optimizer_ms;  // measured, contention taken out where assumed
};

// The factor x in [lo, hi] with modelled(x) == measured, modelled decreasing in x. nullopt when
// the measurement lies outside what the range can explain.
std::optional<double> solve(const std::function<double(double)>& modelled, double measured, double lo = 0.02,
                            double hi = 2.0) {
  if (measured <= 0) return std::nullopt;
  if (modelled(hi) > measured || modelled(lo) < measured) return std::nullopt;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (modelled(mid) > measured ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

}  // namespace

Calibration calibrate(const std::vector<const MeasuredTrial*>& trials, const hardware::GpuSpec& gpu,
                      const hardware::Catalogue& cat, const config::TrialConfig* like) {
  Calibration cal;
  cal.efficiency = default_efficiency(cat);
  Efficiency& eff = cal.efficiency;

  std::vector<const MeasuredTrial*> pool;
  for (const auto* t : trials)
    if (t && t->gpu == &gpu && t->has_phases()) pool.push_back(t);
  if (like) {
    const auto kind = [](const config::TrialConfig& c) {
      return std::make_pair(config::uses_fused_kernels(c.compile), c.amp == config::Amp::Fp8);
    };
    std::vector<const MeasuredTrial*> same;
    for (const auto* t : pool)
      if (kind(t->config) == kind(*like)) same.push_back(t);
    if (!same.empty()) pool = same;
  }
  if (pool.empty()) {
    cal.notes.push_back("no eager trial with phases on " + gpu.name + ": catalogue efficiencies");
    return cal;
  }
  const bool have_single =
      std::any_of(pool.begin(), pool.end(), [](const auto* t) { return t->config.world_size == 1; });

  std::vector<Sample> samples;
  for (const auto* t : pool) {
    if (have_single && t->config.world_size > 1) continue;
    const auto rates = device_rates(gpu, t->config);
    if (!rates) continue;
    Sample s{t,
             {},
             *rates,
             execution_mode(t->config, t->cuda),
             static_cast<double>(std::max<int64_t>(1, t->config.grad_accum)),
             t->metrics.breakdown[Part::Forward],
             t->metrics.breakdown[Part::Backward],
             t->metrics.breakdown[Part::Optimizer]};
    s.work = step_work(t->config, precision_of(t->config), s.mode);
    if (t->config.world_size > 1) {
      // Take the default contention out of the compute phases it slowed (DDP: backward; FSDP:
      // both, in proportion to their length).
      const double hidden = std::max(0.0, t->metrics.breakdown.comm_ms - t->metrics.breakdown[Part::ExposedComm]);
      const hardware::LinkSpec* link = hardware::find_link(gpu.default_link, cat);
      const double kappa = link ? default_contention(link_from_catalogue(*link), gpu) : 0.0;
      const double lost = kappa * hidden;
      if (t->config.strategy == config::Strategy::Ddp) {
        s.backward_ms = std::max(0.0, s.backward_ms - lost);
      } else {
        const double total = s.forward_ms + s.backward_ms;
        if (total > 0) {
          const double forward_share = s.forward_ms / total;
          s.forward_ms = std::max(0.0, s.forward_ms - lost * forward_share);
          s.backward_ms = std::max(0.0, s.backward_ms - lost * (1.0 - forward_share));
        }
      }
    }
    samples.push_back(std::move(s));
    cal.used.push_back(t->label);
  }
  if (samples.empty()) {
    cal.notes.push_back("no trial in a precision the catalogue has a peak for: catalogue efficiencies");
    return cal;
  }

  // 1. memory efficiency from the optimizer phases
  double measured = 0;
  for (const auto& s : samples) measured += s.optimizer_ms;
  const auto memory = solve(
      [&](double e) {
        Efficiency x = eff;
        x.memory = e;
        double sum = 0;
        for (const auto& s : samples)
          sum += phase_ms(s.work.optimizer, s.rates, x.matmul_forward, x, s.mode.cuda_graph);
        return sum;
      },
      measured);
  if (memory)
    eff.memory = *memory;
  else
    cal.notes.push_back("the optimizer phases do not fit the bandwidth model: memory efficiency left at default");

  // 2. matmul efficiency in forward
  measured = 0;
  for (const auto& s : samples) measured += s.forward_ms;
  const auto forward = solve(
      [&](double e) {
        double sum = 0;
        for (const auto& s : samples) sum += s.accum * phase_ms(s.work.forward, s.rates, e, eff, s.mode.cuda_graph);
        return sum;
      },
      measured);
  if (forward)
    eff.matmul_forward = *forward;
  else
    cal.notes.push_back("the forward phases do not fit the model: matmul efficiency (forward) left at default");

  // 3. matmul efficiency in backward (recompute runs forward's kernels)
  measured = 0;
  for (const auto& s : samples) measured += s.backward_ms;
  const auto backward = solve(
      [&](double e) {
        double sum = 0;
        for (const auto& s : samples) {
          sum += s.accum * phase_ms(s.work.backward, s.rates, e, eff, s.mode.cuda_graph);
          if (s.trial->config.checkpointing)
            sum += s.accum * phase_ms(s.work.recompute, s.rates, eff.matmul_forward, eff, s.mode.cuda_graph);
        }
        return sum;
      },
      measured);
  if (backward)
    eff.matmul_backward = *backward;
  else
    cal.notes.push_back("the backward phases do not fit the model: matmul efficiency (backward) left at default");

  eff.source = "calibrated on " + gpu.name + " from " + std::to_string(samples.size()) + " trial(s): matmul " +
               fmt(eff.matmul_forward) + " forward / " + fmt(eff.matmul_backward) + " backward, memory " +
               fmt(eff.memory);

  // 4. contention per transport, from multi-GPU trials, once compute came from single-GPU trials
  if (have_single) {
    std::map<std::string, std::pair<double, double>> lost_and_hidden;
    for (const auto* t : pool) {
      if (t->config.world_size < 2) continue;
      const auto rates = device_rates(gpu, t->config);
      if (!rates) continue;
      const double hidden = std::max(0.0, t->metrics.breakdown.comm_ms - t->metrics.breakdown[Part::ExposedComm]);
      if (hidden < 1.0) continue;
      const ExecutionMode mode = execution_mode(t->config, t->cuda);
      const StepWork work = step_work(t->config, precision_of(t->config), mode);
      const double a = static_cast<double>(std::max<int64_t>(1, t->config.grad_accum));
      double modelled = a * (phase_ms(work.forward, *rates, eff.matmul_forward, eff, false) +
                             phase_ms(work.backward, *rates, eff.matmul_backward, eff, false));
      if (t->config.checkpointing) modelled += a * phase_ms(work.recompute, *rates, eff.matmul_forward, eff, false);
      const double measured_compute = t->metrics.breakdown[Part::Forward] + t->metrics.breakdown[Part::Backward];
      auto& [lost, hid] = lost_and_hidden[t->transport];
      lost += measured_compute - modelled;
      hid += hidden;
      cal.used.push_back(t->label);
    }
    for (const auto& [key, lh] : lost_and_hidden) {
      const double kappa = std::clamp(lh.first / lh.second, 0.0, 1.0);
      cal.contention[key] = kappa;
    }
  }
  return cal;
}

}  // namespace tunebench::predict
