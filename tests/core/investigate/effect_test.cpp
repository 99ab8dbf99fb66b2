// The noise model: intervals, the run-to-run floor, and "beyond the noise".
#include <gtest/gtest.h>

#include <random>

#include "core/investigate/effect.h"

namespace ti = tunebench::investigate;

namespace {

ti::ArmSamples arm(double median_ms, double sd, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(median_ms, sd);
  ti::ArmSamples a;
  for (int i = 0; i < n; ++i) a.step_ms.push_back(d(rng));
  a.work_per_step = 4096;
  return a;
}

}  // namespace

TEST(Effect, APlantedThirtyPercentEffectIsBeyondTheNoise) {
  const auto e = ti::estimate_effect(arm(143, 3, 30, 1), arm(100, 3, 30, 2), 0.02);
  EXPECT_NEAR(e.ratio, 1.43, 0.03);
  EXPECT_GT(e.low, 1.3);
  EXPECT_LT(e.high, 1.6);
  EXPECT_TRUE(e.beyond_noise);
}

TEST(Effect, AnEffectSmallerThanTheRunToRunNoiseIsNotDeclared) {
  // 0.5 % apart, 3 % per-step noise: the interval straddles 1 or the floor is larger.
  const auto e = ti::estimate_effect(arm(100, 3, 30, 3), arm(99.5, 3, 30, 4), 0.02);
  EXPECT_FALSE(e.beyond_noise);
  EXPECT_LE(e.low, e.ratio);
  EXPECT_GE(e.high, e.ratio);
}

TEST(Effect, ARunToRunFloorVetoesATightButSmallInterval) {
  // Almost noiseless steps, 3 % apart: the bootstrap interval excludes 1, but two baseline runs
  // differed by 5 %, so 3 % is not an effect.
  const auto e = ti::estimate_effect(arm(100, 0.1, 30, 5), arm(97, 0.1, 30, 6), ti::noise_floor({100, 105}));
  EXPECT_GT(e.low, 1.0);
  EXPECT_FALSE(e.beyond_noise);
}

TEST(Effect, TokensPerStepAreTakenIntoAccount) {
  auto big = arm(190, 1, 30, 7);
  big.work_per_step = 8192;  // twice the tokens in 1.9x the time: 5 % faster
  const auto e = ti::estimate_effect(arm(100, 1, 30, 8), big, 0.01);
  EXPECT_NEAR(e.ratio, 2.0 * 100 / 190, 0.01);
}

TEST(Effect, NoiseFloorIsTheRangeOfRepeatsAndNeverBelowOnePercent) {
  EXPECT_DOUBLE_EQ(ti::noise_floor({100}), ti::kMinNoiseFloor);
  EXPECT_NEAR(ti::noise_floor({100, 104}), 4.0 / 102.0, 1e-9);
  EXPECT_DOUBLE_EQ(ti::noise_floor({100, 100.1}), ti::kMinNoiseFloor);
}

TEST(Effect, SameTrialsGiveTheSameInterval) {
  const auto a = ti::estimate_effect(arm(100, 5, 20, 9), arm(90, 5, 20, 10), 0.01);
  const auto b = ti::estimate_effect(arm(100, 5, 20, 9), arm(90, 5, 20, 10), 0.01);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
}
