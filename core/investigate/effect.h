// The noise model of an investigation: how large an effect must be before it counts.
//
// An arm (the baseline, or one variant) is a set of repeated trials of one configuration. Its
// throughput per step is tokens_per_step / step time of each measured (steady-state) step, the
// definition of core/analysis. The effect of a variant is the ratio of median throughputs
// (variant / baseline); its 95 % interval comes from a percentile bootstrap over the pooled
// per-step samples of both arms (analysis/step_time.h; fixed seed: the same trials give the same interval). Steps of
// one run are not independent of the run (a neighbour's load shifts a whole run), so the effect
// must also exceed the run-to-run noise floor: the spread of the baseline's repeated runs'
// medians. An effect is "beyond the noise" only when its interval excludes 1 and its size
// exceeds the floor. docs/INVESTIGATE.md says why and how to check it by hand.
#pragma once

#include <cstdint>
#include <vector>

namespace tunebench::investigate {

inline constexpr double kMinNoiseFloor = 0.01;  // never claim an effect below 1 %
inline constexpr int kBootstrapResamples = 2000;
inline constexpr uint64_t kBootstrapSeed = 0x7b5eedULL;

struct ArmSamples {
  std::vector<double> step_ms;          // pooled measured steps of every repeat
  double work_per_step = 0;             // all ranks together, in the arm's unit (analysis::work_rate)
  std::vector<double> repeat_median_ms; // each repeat's median step time
};

struct Effect {
  double ratio = 1.0;  // variant median tokens/s over the baseline's
  double low = 1.0;    // 95 % bootstrap interval of the ratio
  double high = 1.0;
  double noise_floor = kMinNoiseFloor;  // relative run-to-run noise of the baseline
  bool beyond_noise = false;
};

// Relative run-to-run noise of repeated runs: (max - min) / median of their medians, at least
// kMinNoiseFloor. One repeat gives kMinNoiseFloor and the caller should repeat it.
double noise_floor(const std::vector<double>& repeat_median_ms);

Effect estimate_effect(const ArmSamples& baseline, const ArmSamples& variant, double floor,
                       int resamples = kBootstrapResamples, uint64_t seed = kBootstrapSeed);

}  // namespace tunebench::investigate
