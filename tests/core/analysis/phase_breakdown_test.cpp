// The phase breakdown: hand-computed parts, the priority convention, and the exact-sum property.
#include "core/analysis/phase_breakdown.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "core/metrics/spans.h"
#include "tests/core/analysis/synthetic_trial.h"

namespace ta = tunebench::analysis;
namespace tp = tunebench::protocol;
using tp::Phase;
using tunebench::testing::iv;
using tunebench::testing::iv_on;
using Part = ta::Part;

namespace {

tp::Step make_step(int64_t start, int64_t end, std::vector<tp::Interval> intervals) {
  tp::Step s;
  s.start_us = start;
  s.end_us = end;
  s.step_ms = static_cast<double>(end - start) / 1000.0;
  s.intervals = std::move(intervals);
  return s;
}

int64_t sum(const ta::PhaseBreakdown& b) { return std::accumulate(b.part_us.begin(), b.part_us.end(), int64_t{0}); }

}  // namespace

TEST(PhaseBreakdown, HandComputedStepWithPartialOverlaps) {
  // Window [1000, 2000) µs.
  const auto s = make_step(1000, 2000,
                           {
                               iv(Phase::DataWait, 950, 1100),         // clipped to [1000,1100): 100
                               iv(Phase::HostToDevice, 1100, 1120),    // 20
                               iv(Phase::Forward, 1120, 1400),         // 280
                               iv(Phase::Backward, 1400, 1800),        // 400 ...
                               iv(Phase::Recompute, 1500, 1600),       // ... with recompute nested inside
                               iv(Phase::AllReduce, 1600, 1700, 100),  // hidden under backward
                               iv(Phase::AllReduce, 1750, 1900, 100),  // [1750,1800) hidden, [1800,1900) exposed: 100
                               iv(Phase::DataWait, 1850, 1870),   // host wait under an exposed collective: comm wins
                               iv(Phase::Optimizer, 1920, 1980),  // 60; idle [1900,1920) and [1980,2000): 40
                           });
  const auto b = ta::breakdown_of(s);
  EXPECT_EQ(b.step_us, 1000);
  EXPECT_EQ(b[Part::DataWait], 100);
  EXPECT_EQ(b[Part::HostToDevice], 20);
  EXPECT_EQ(b[Part::Forward], 280);
  EXPECT_EQ(b[Part::Backward], 400);
  EXPECT_EQ(b[Part::Optimizer], 60);
  EXPECT_EQ(b[Part::OtherCompute], 0);
  EXPECT_EQ(b[Part::ExposedComm], 100);
  EXPECT_EQ(b[Part::Idle], 40);
  EXPECT_EQ(sum(b), b.step_us);
  EXPECT_EQ(b.comm_us, 250);
  EXPECT_EQ(b.recompute_us, 100);
  EXPECT_EQ(b.compute_us, 280 + 400 + 60);
}

TEST(PhaseBreakdown, OverlappingCollectivesOnTwoStreamsCountOnce) {
  // FSDP: all-gather [0,300) and reduce-scatter [200,500) overlap each other; forward [100,250).
  // comm union 500, hidden 150, exposed 350; idle [500,600).
  const auto s = make_step(
      0, 600, {iv(Phase::AllGather, 0, 300, 10), iv(Phase::ReduceScatter, 200, 500, 10), iv(Phase::Forward, 100, 250)});
  const auto b = ta::breakdown_of(s);
  EXPECT_EQ(b.comm_us, 500);
  EXPECT_EQ(b[Part::ExposedComm], 350);
  EXPECT_EQ(b[Part::Forward], 150);
  EXPECT_EQ(b[Part::Idle], 100);
  EXPECT_EQ(sum(b), 600);
}

TEST(PhaseBreakdown, HostOptimizerTimeCountsAsOptimizerOnlyWhenTheDeviceIsQuiet) {
  const auto s = make_step(0, 100, {iv(Phase::Backward, 0, 50), iv_on(tp::Lane::Host, Phase::Optimizer, 40, 80)});
  const auto b = ta::breakdown_of(s);
  EXPECT_EQ(b[Part::Backward], 50);
  EXPECT_EQ(b[Part::Optimizer], 30);
  EXPECT_EQ(b[Part::Idle], 20);
}

TEST(PhaseBreakdown, StepWithoutIntervalsIsIdle) {
  const auto b = ta::breakdown_of(make_step(0, 5000, {}));
  EXPECT_EQ(b[Part::Idle], 5000);
  EXPECT_EQ(sum(b), 5000);
}

TEST(PhaseBreakdown, PartsAlwaysSumToTheStepAndExposedMatchesIntervalArithmetic) {
  std::mt19937_64 rng(7);  // deterministic
  const Phase phases[] = {Phase::DataWait,      Phase::HostToDevice, Phase::Forward,   Phase::Backward,
                          Phase::Recompute,     Phase::Optimizer,    Phase::AllReduce, Phase::AllGather,
                          Phase::ReduceScatter, Phase::Other};
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t start = static_cast<int64_t>(rng() % 1000), length = 1 + static_cast<int64_t>(rng() % 5000);
    std::vector<tp::Interval> ins;
    std::vector<tunebench::metrics::Span> comm, compute;
    const int count = static_cast<int>(rng() % 40);
    for (int i = 0; i < count; ++i) {
      const int64_t a = start - 500 + static_cast<int64_t>(rng() % static_cast<uint64_t>(length + 1000));
      const int64_t b = a + static_cast<int64_t>(rng() % 800);
      ins.push_back(iv(phases[rng() % std::size(phases)], a, b, 1));
      const tunebench::metrics::Span sp{std::max(a, start), std::min(b, start + length)};
      if (ins.back().lane == tp::Lane::Comm) comm.push_back(sp);
      if (ins.back().lane == tp::Lane::Compute) compute.push_back(sp);
    }
    const auto b = ta::breakdown_of(make_step(start, start + length, ins));
    ASSERT_EQ(sum(b), length) << "trial " << trial;
    ASSERT_EQ(b[Part::ExposedComm], tunebench::metrics::uncovered_us(comm, compute)) << "trial " << trial;
    ASSERT_EQ(b.comm_us, tunebench::metrics::covered_us(comm));
  }
}
