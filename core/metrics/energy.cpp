#include "core/metrics/energy.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace tunebench::metrics {
namespace {

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 1000 ? "%.0f ms" : "%.1f s", ms < 1000 ? ms : ms / 1000.0);
  return buf;
}

}  // namespace

EnergyWindow energy_over_window(const std::vector<EnergyReading>& readings, int64_t start_us, int64_t end_us) {
  EnergyWindow w;
  const EnergyReading* first = nullptr;
  const EnergyReading* last = nullptr;
  for (const auto& r : readings) {
    if (r.t_us < start_us || r.t_us > end_us) continue;
    if (!first) first = &r;
    if (last && r.energy_mj < last->energy_mj) {
      w.problem = "the energy counter went backwards inside the window (the driver was reloaded?)";
      return w;
    }
    last = &r;
  }
  const double window_ms = static_cast<double>(end_us - start_us) / 1000.0;
  if (window_ms < kEnergyCounterPeriodMs) {
    w.problem = "the window (" + ms_text(window_ms) + ") is shorter than the energy counter's update period (about " +
                ms_text(kEnergyCounterPeriodMs) + ")";
    return w;
  }
  if (!first || first == last) {
    w.problem = "fewer than two energy readings inside the window (" + ms_text(window_ms) + ")";
    return w;
  }
  w.covered_ms = static_cast<double>(last->t_us - first->t_us) / 1000.0;
  if (w.covered_ms < kEnergyCounterPeriodMs) {
    w.problem = "the energy readings span " + ms_text(w.covered_ms) +
                ", shorter than the energy counter's update period (about " + ms_text(kEnergyCounterPeriodMs) + ")";
    return w;
  }
  if (w.covered_ms < kMinEnergyWindowMs) {
    w.problem = "the energy readings span " + ms_text(w.covered_ms) + "; the counter advances about every " +
                ms_text(kEnergyCounterPeriodMs) + ", so at least " + ms_text(kMinEnergyWindowMs) +
                " are needed (run more steps)";
    return w;
  }
  const double mean_w = static_cast<double>(last->energy_mj - first->energy_mj) / w.covered_ms;  // mJ/ms = W
  w.joules = mean_w * window_ms / 1000.0;
  w.error_bound = 2.0 * kEnergyCounterPeriodMs / w.covered_ms;
  return w;
}

double tokens_per_joule(double tokens, double joules) { return joules > 0 ? tokens / joules : 0.0; }

TrialEnergy trial_energy(const protocol::TrialLog& log) {
  TrialEnergy t;
  std::set<int64_t> step_indices;
  double tokens = 0;
  for (const auto& [rank, r] : log.ranks) {
    RankEnergy e;
    e.rank = rank;
    int64_t start = 0, end = 0;
    for (const auto& s : r.steps) {
      if (s.warmup) continue;
      start = e.steps == 0 ? s.start_us : std::min(start, s.start_us);
      end = e.steps == 0 ? s.end_us : std::max(end, s.end_us);
      ++e.steps;
      e.tokens += s.tokens;
      step_indices.insert(s.step);
    }
    std::vector<EnergyReading> readings;
    for (const auto& sample : r.samples)
      if (sample.value.counters.energy_mj) {
        readings.push_back({sample.t_us, *sample.value.counters.energy_mj});
        e.gpu_index = sample.value.index;
      }
    if (e.steps == 0 && r.samples.empty()) continue;  // a rank that sent nothing to measure
    if (e.steps == 0)
      e.window.problem = "no measured steps";
    else if (readings.empty())
      e.window.problem = "no energy readings (NVML's energy counter: NVIDIA GPUs of the Volta generation and newer)";
    else
      e.window = energy_over_window(readings, start, end);
    if (e.window.ok()) {
      e.joules_per_step = e.window.joules / static_cast<double>(e.steps);
      e.tokens_per_joule = tokens_per_joule(static_cast<double>(e.tokens), e.window.joules);
      t.joules += e.window.joules;
      tokens += static_cast<double>(e.tokens);
      t.error_bound = std::max(t.error_bound, e.window.error_bound);
    } else if (t.problem.empty()) {
      t.problem = "rank " + std::to_string(rank) + ": " + e.window.problem;
    }
    t.ranks.push_back(std::move(e));
  }
  if (t.ranks.empty()) t.problem = "no ranks with steps or telemetry";
  if (!t.ok()) {
    t.joules = 0;
    return t;
  }
  t.joules_per_step = t.joules / static_cast<double>(step_indices.size());
  t.tokens_per_joule = tokens_per_joule(tokens, t.joules);
  return t;
}

}  // namespace tunebench::metrics
