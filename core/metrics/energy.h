// Energy: joules per step and tokens per joule, per GPU and per trial, defined once, from NVML's
// total-energy counter (GpuCounters::energy_mj of the `gpu` telemetry samples).
//
// The counter counts millijoules since the driver loaded and advances about every 100 ms
// (kEnergyCounterPeriodMs), so a reading is up to one period stale at each end of a window: over a
// window of W ms the energy is uncertain by about 2 x 100 / W (error_bound). A window shorter than
// the counter's period says nothing and one shorter than kMinEnergyWindowMs is too coarse: both are
// refused with the reason, never reported as a number. The energy of a rank's measured steps is its
// GPU's mean power between the first and the last reading inside their window, times the window.
// Views, the report and autotune read these functions; none computes its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/trial_log.h"

namespace tunebench::metrics {

// NVML's energy counter advances about this often (Hopper; Zeus reads it with the same caution).
inline constexpr double kEnergyCounterPeriodMs = 100.0;
// The shortest window reported: 20 counter periods, an error of at most about 10 %.
inline constexpr double kMinEnergyWindowMs = 20 * kEnergyCounterPeriodMs;

struct EnergyReading {
  int64_t t_us = 0;      // when it was read (host clock)
  int64_t energy_mj = 0; // the counter
};

struct EnergyWindow {
  double joules = 0.0;       // energy over the window asked for
  double covered_ms = 0.0;   // the span between the first and last reading used
  double error_bound = 0.0;  // relative: 2 counter periods over the covered span
  std::string problem;       // why there is no figure; empty when there is one
  bool ok() const { return problem.empty(); }
};

// Energy between start_us and end_us from readings sorted by time. Refused (problem set): fewer
// than two readings inside the window, a counter that went backwards (the driver reloaded), a
// covered span shorter than the counter's period or than kMinEnergyWindowMs.
EnergyWindow energy_over_window(const std::vector<EnergyReading>& readings, int64_t start_us, int64_t end_us);

// Tokens per joule; 0 when the energy is not positive. The one definition.
double tokens_per_joule(double tokens, double joules);

struct RankEnergy {
  int rank = 0;
  int gpu_index = -1;
  int64_t steps = 0;         // measured steps in the window
  int64_t tokens = 0;        // their tokens on this rank
  EnergyWindow window;
  double joules_per_step = 0.0;
  double tokens_per_joule = 0.0;
};

struct TrialEnergy {
  std::vector<RankEnergy> ranks;
  double joules = 0.0;            // all GPUs over their measured steps
  double joules_per_step = 0.0;   // all GPUs, per optimizer step
  double tokens_per_joule = 0.0;  // all ranks' tokens over all GPUs' energy
  double error_bound = 0.0;       // the largest of the ranks'
  std::string problem;            // why there is no trial figure (the first rank's refusal, or no readings)
  bool ok() const { return problem.empty(); }
};

// Every rank's energy over its measured steps, and the trial's.
TrialEnergy trial_energy(const protocol::TrialLog& log);

}  // namespace tunebench::metrics
