// Energy from NVML's energy counter: windows too short for the counter are refused with the
// reason; a steady power gives joules per step and tokens per joule by their definitions.
#include "core/metrics/energy.h"
#include "core/metrics/gpu_counters.h"

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

TEST(GpuCounters, ActivityIsTheMeanOfTheSamplesInsideMeasuredSteps) {
  tp::TrialLog log;
  auto& r = log.ranks[0];
  for (int i = 0; i < 4; ++i) {
    tp::Step s;
    s.step = i;
    s.warmup = i == 0;
    s.start_us = i * 1'000'000;
    s.end_us = (i + 1) * 1'000'000;
    r.steps.push_back(s);
  }
  auto sample = [&](int64_t t, double sm, std::optional<double> tensor) {
    tp::GpuSample g;
    g.index = 0;
    g.counters.sm_activity_pct = sm;
    g.counters.tensor_activity_pct = tensor;
    r.samples.push_back({t, g});
  };
  sample(500'000, 5, 1);  // in the warm-up step: left out
  sample(1'500'000, 80, 40);
  sample(2'500'000, 90, std::nullopt);
  sample(3'500'000, 70, 20);
  const auto a = tbm::trial_activity(log);
  ASSERT_TRUE(a.sm_activity_pct);
  EXPECT_DOUBLE_EQ(*a.sm_activity_pct, 80.0);
  EXPECT_DOUBLE_EQ(*a.tensor_activity_pct, 30.0);
  EXPECT_FALSE(a.sm_occupancy_pct);
  EXPECT_EQ(a.samples, 3);
  EXPECT_EQ(a.problem, "");
}

TEST(GpuCounters, WithoutActivityTheWorkersReasonIsKept) {
  tp::TrialLog log;
  tp::Step s;
  s.step = 0;
  s.end_us = 1'000'000;
  log.ranks[1].steps.push_back(s);
  log.ranks[1].warnings.push_back({0, tp::Warning{"gpm", "SM and tensor-core activity unavailable: this GPU has no GPM counters"}});
  const auto a = tbm::trial_activity(log);
  EXPECT_FALSE(a.sm_activity_pct);
  EXPECT_EQ(a.problem, "rank 1: SM and tensor-core activity unavailable: this GPU has no GPM counters");
  log.ranks[1].warnings.clear();
  EXPECT_NE(tbm::trial_activity(log).problem.find("no SM activity samples"), std::string::npos);
}
