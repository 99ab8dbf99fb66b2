// Energy from NVML's energy counter: windows too short for the counter are refused with the
// reason; a steady power gives joules per step and tokens per joule by their definitions.
#include "core/metrics/energy.h"

#include <gtest/gtest.h>

namespace tbm = tunebench::metrics;
namespace tp = tunebench::protocol;

namespace {

// Readings every `every_ms` from t0 of a device drawing `watts`, the counter advancing only every
// kEnergyCounterPeriodMs (as NVML's does).
std::vector<tbm::EnergyReading> readings(int64_t t0_us, double seconds, double every_ms, double watts) {
  std::vector<tbm::EnergyReading> out;
  const int64_t start_mj = 123'456'789;
  for (double t = 0; t <= seconds * 1000.0 + 1e-9; t += every_ms) {
    const double updated_ms = std::floor(t / tbm::kEnergyCounterPeriodMs) * tbm::kEnergyCounterPeriodMs;
    out.push_back({t0_us + static_cast<int64_t>(t * 1000.0), start_mj + static_cast<int64_t>(watts * updated_ms)});
  }
  return out;
}

}  // namespace

TEST(Energy, AWindowShorterThanTheCounterPeriodIsRefused) {
  const auto r = readings(0, 1.0, 10, 500);
  const auto w = tbm::energy_over_window(r, 200'000, 250'000);  // 50 ms
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.problem.find("shorter than the energy counter's update period"), std::string::npos) << w.problem;
  EXPECT_EQ(w.joules, 0.0);
}

TEST(Energy, AWindowOfAFewCounterPeriodsIsRefusedAsTooCoarse) {
  const auto r = readings(0, 10.0, 100, 500);
  const auto w = tbm::energy_over_window(r, 1'000'000, 1'900'000);  // 0.9 s
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.problem.find("at least 2.0 s are needed"), std::string::npos) << w.problem;
}

TEST(Energy, ALongWindowGivesTheEnergyWithinItsBound) {
  const auto r = readings(0, 20.0, 100, 500);
  const auto w = tbm::energy_over_window(r, 2'000'000, 12'000'000);  // 10 s at 500 W
  ASSERT_TRUE(w.ok()) << w.problem;
  EXPECT_NEAR(w.joules, 5000.0, 5000.0 * w.error_bound);
  EXPECT_NEAR(w.error_bound, 2 * 100.0 / w.covered_ms, 1e-12);
}

TEST(Energy, ACounterThatGoesBackwardsIsRefused) {
  auto r = readings(0, 10.0, 100, 500);
  r[50].energy_mj = 0;
  const auto w = tbm::energy_over_window(r, 0, 10'000'000);
  EXPECT_NE(w.problem.find("went backwards"), std::string::npos) << w.problem;
}

TEST(Energy, TokensPerJouleIsDefinedOnceAndZeroWithoutEnergy) {
  EXPECT_DOUBLE_EQ(tbm::tokens_per_joule(1000, 4), 250.0);
  EXPECT_EQ(tbm::tokens_per_joule(1000, 0), 0.0);
}

TEST(Energy, ATrialsFiguresSumItsGpus) {
  tp::TrialLog log;
  const double watts[2] = {400, 600};
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = log.ranks[rank];
    for (int i = 0; i < 12; ++i) {  // 2 warm-up steps, then 10 of 1 s, 4096 tokens each
      tp::Step s;
      s.step = i;
      s.warmup = i < 2;
      s.start_us = i * 1'000'000;
      s.end_us = (i + 1) * 1'000'000;
      s.tokens = 4096;
      r.steps.push_back(s);
    }
    for (const auto& e : readings(0, 12.0, 100, watts[rank])) {
      tp::GpuSample g;
      g.index = rank;
      g.counters.energy_mj = e.energy_mj;
      r.samples.push_back({e.t_us, g});
    }
  }
  const auto t = tbm::trial_energy(log);
  ASSERT_TRUE(t.ok()) << t.problem;
  ASSERT_EQ(t.ranks.size(), 2u);
  for (const auto& e : t.ranks) {
    EXPECT_EQ(e.steps, 10);
    EXPECT_EQ(e.tokens, 40960);
    EXPECT_NEAR(e.joules_per_step, watts[e.rank], watts[e.rank] * e.window.error_bound);
    EXPECT_DOUBLE_EQ(e.tokens_per_joule, tbm::tokens_per_joule(40960, e.window.joules));
  }
  EXPECT_DOUBLE_EQ(t.joules, t.ranks[0].window.joules + t.ranks[1].window.joules);
  EXPECT_DOUBLE_EQ(t.joules_per_step, t.joules / 10);
  EXPECT_DOUBLE_EQ(t.tokens_per_joule, tbm::tokens_per_joule(2 * 40960, t.joules));
}

TEST(Energy, ACpuTrialSaysWhyItHasNoEnergy) {
  tp::TrialLog log;
  tp::Step s;
  s.step = 0;
  s.start_us = 0;
  s.end_us = 5'000'000;
  log.ranks[0].steps.push_back(s);
  tp::GpuSample cpu;  // a /proc sample: no counters
  log.ranks[0].samples.push_back({1000, cpu});
  const auto t = tbm::trial_energy(log);
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.problem.find("rank 0: no energy readings"), std::string::npos) << t.problem;
  EXPECT_EQ(t.tokens_per_joule, 0.0);
}
