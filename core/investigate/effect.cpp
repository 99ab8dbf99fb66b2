#include "core/investigate/effect.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/metrics/percentile.h"

namespace tunebench::investigate {
namespace {

double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return metrics::percentile_sorted(v, 0.5);
}

double resampled_median(const std::vector<double>& v, std::mt19937_64& rng, std::vector<double>& scratch) {
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  scratch.resize(v.size());
  for (auto& x : scratch) x = v[pick(rng)];
  return median_of(scratch);
}

}  // namespace

double noise_floor(const std::vector<double>& repeat_median_ms) {
  if (repeat_median_ms.size() < 2) return kMinNoiseFloor;
  auto v = repeat_median_ms;
  const double mid = median_of(v);
  if (mid <= 0) return kMinNoiseFloor;
  return std::max(kMinNoiseFloor, (v.back() - v.front()) / mid);
}

Effect estimate_effect(const ArmSamples& baseline, const ArmSamples& variant, double floor, int resamples,
                       uint64_t seed) {
  Effect e;
  e.noise_floor = floor;
  if (baseline.step_ms.empty() || variant.step_ms.empty() || baseline.work_per_step <= 0 ||
      variant.work_per_step <= 0)
    return e;
  const double tokens = variant.work_per_step / baseline.work_per_step;
  auto b = baseline.step_ms, v = variant.step_ms;
  e.ratio = tokens * median_of(b) / median_of(v);
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double mb = resampled_median(baseline.step_ms, rng, scratch);
    const double mv = resampled_median(variant.step_ms, rng, scratch);
    ratios.push_back(tokens * mb / mv);
  }
  std::sort(ratios.begin(), ratios.end());
  e.low = metrics::percentile_sorted(ratios, 0.025);
  e.high = metrics::percentile_sorted(ratios, 0.975);
  const bool excludes_one = e.low > 1.0 || e.high < 1.0;
  e.beyond_noise = excludes_one && std::abs(e.ratio - 1.0) > floor;
  return e;
}

}  // namespace tunebench::investigate
