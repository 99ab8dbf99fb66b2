// Pair diagnosis of a synthetic single-GPU vs DDP pair: where the extra milliseconds went, the
// communication floor, and whether DDP can beat one GPU at all.
#include "core/analysis/pair_diagnosis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/analysis/format.h"
#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
using namespace tunebench::testing;
using Part = ta::Part;

TEST(PairDiagnosis, DdpOverSingleHeadlineAddsUp) {
  const auto single = ta::analyze(single_gpu_trial().log());
  const auto ddp = ta::analyze(ddp_trial().log());
  const auto p = ta::diagnose_pair(single, ddp);
  EXPECT_DOUBLE_EQ(p.step_delta_ms, 43.0);
  ASSERT_EQ(p.deltas.size(), ta::kPartCount);
  EXPECT_EQ(p.deltas[0].part, Part::ExposedComm);
  EXPECT_DOUBLE_EQ(p.deltas[0].delta_ms, 38.0);
  EXPECT_EQ(p.deltas[1].part, Part::DataWait);
  EXPECT_DOUBLE_EQ(p.deltas[1].delta_ms, 5.0);
  const double sum = std::accumulate(p.deltas.begin(), p.deltas.end(), 0.0,
                                     [](double a, const ta::PartDelta& d) { return a + d.delta_ms; });
  EXPECT_NEAR(sum, p.step_delta_ms, 1e-9);
  EXPECT_EQ(p.headline,
            "ddp x2 step +43.0 ms over single (mean): exposed all-reduce +38.0 ms (13.5 GB of fp32 gradients at "
            "310 GB/s, 48 % hidden behind backward), data wait +5.0 ms");
  ASSERT_TRUE(p.scaling_efficiency);
  EXPECT_NEAR(*p.scaling_efficiency, 100.0 / 143.0, 1e-12);
}

TEST(PairDiagnosis, FloorAndFeasibility) {
  const auto single = ta::analyze(single_gpu_trial().log());
  const auto ddp = ta::analyze(ddp_trial().log());
  const auto p = ta::diagnose_pair(single, ddp);
  ASSERT_TRUE(p.feasibility);
  const auto& f = *p.feasibility;
  const double floor = 13.5e9 / 310e9 * 1e3;  // 43.548 ms
  EXPECT_NEAR(f.floor_ms, floor, 1e-9);
  EXPECT_NEAR(f.compute_ms, 100.0, 1e-9);  // one rank's 4,096 tokens took the single GPU 100 ms
  EXPECT_NEAR(f.backward_ms, 60.0, 1e-9);
  EXPECT_NEAR(f.exposed_min_ms, 0.0, 1e-9);  // the floor fits under backward
  EXPECT_NEAR(f.speedup_no_overlap, 2 * 100.0 / (100.0 + floor), 1e-9);
  EXPECT_NEAR(f.speedup_full_overlap, 2.0, 1e-9);
  EXPECT_NEAR(f.speedup_measured, 200.0 / 143.0, 1e-9);
  EXPECT_TRUE(f.can_beat_single);
  EXPECT_EQ(f.accum_for_90pct, 4);  // ceil(9 * 43.548 / 100) = ceil(3.92)
  ASSERT_FALSE(p.findings.empty());
  EXPECT_EQ(p.findings[0].kind, ta::FindingKind::CommBound);
  bool scaling = false;
  for (const auto& fi : p.findings)
    scaling = scaling || fi.kind == ta::FindingKind::Scaling;
  EXPECT_TRUE(scaling);
}

TEST(PairDiagnosis, SlowInterconnectCannotBeatOneGpuWithoutAccumulation) {
  // Forum-like: 4.4 GB at 11 GB/s = 400 ms floor against 1.2 s compute: DDP wins even with no overlap.
  const auto single = ta::analyze(forum_single_trial().log());
  const auto ddp = ta::analyze(forum_ddp_trial().log());
  auto p = ta::diagnose_pair(single, ddp);
  ASSERT_TRUE(p.feasibility);
  EXPECT_NEAR(p.feasibility->floor_ms, 4.4e9 / 11e9 * 1e3, 1e-9);
  EXPECT_TRUE(p.feasibility->can_beat_single);
  EXPECT_NE(p.feasibility->statement.find("even with no overlap"), std::string::npos) << p.feasibility->statement;

  // The same DDP trial against faster single GPUs, with only 50 ms of backward to hide behind:
  // F = 400 ms, exposed at least F - 50 = 350 ms.
  auto fast = single;
  auto slow_link = ddp;
  slow_link.breakdown.part_ms[static_cast<size_t>(Part::Backward)] = 50.0;
  const double floor = 4.4e9 / 11e9 * 1e3;
  fast.step_ms.median = 375.0;  // no overlap: 750 / 775 = 0.97x; full overlap: 750 / 725 = 1.03x
  p = ta::diagnose_pair(fast, slow_link);
  ASSERT_TRUE(p.feasibility);
  EXPECT_NEAR(p.feasibility->exposed_min_ms, floor - 50.0, 1e-9);
  EXPECT_NEAR(p.feasibility->speedup_no_overlap, 750.0 / (375.0 + floor), 1e-9);
  EXPECT_NEAR(p.feasibility->speedup_full_overlap, 750.0 / (375.0 + floor - 50.0), 1e-9);
  EXPECT_TRUE(p.feasibility->can_beat_single);
  EXPECT_NE(p.feasibility->statement.find("only if the all-reduce overlaps backward"), std::string::npos)
      << p.feasibility->statement;
  fast.step_ms.median = 30.0;  // 60 / 380 = 0.16x at best: cannot win
  p = ta::diagnose_pair(fast, slow_link);
  EXPECT_FALSE(p.feasibility->can_beat_single);
  EXPECT_EQ(p.feasibility->accum_for_90pct, 120);  // 9 * 400 / 30 = 120
  EXPECT_NE(p.feasibility->statement.find("cannot beat one GPU"), std::string::npos) << p.feasibility->statement;
}

TEST(PairDiagnosis, TwoMultiGpuTrialsHaveNoFeasibilityModel) {
  const auto ddp = ta::analyze(ddp_trial().log());
  auto faster = ddp;
  faster.label = "ddp x2 bf16";
  faster.breakdown.part_ms[static_cast<size_t>(Part::ExposedComm)] = 10.0;
  faster.breakdown.step_ms -= 28.0;
  const auto p = ta::diagnose_pair(ddp, faster);
  EXPECT_FALSE(p.feasibility);
  EXPECT_FALSE(p.scaling_efficiency);
  EXPECT_DOUBLE_EQ(p.step_delta_ms, -28.0);
  EXPECT_EQ(p.headline.rfind("ddp x2 bf16 step -28.0 ms vs ddp x2 (mean): exposed all-reduce -28.0 ms", 0), 0u)
      << p.headline;
}

namespace {

tunebench::config::TrialConfig cpu_config(const char* name, tunebench::config::Strategy strategy, int world) {
  tunebench::config::TrialConfig c;
  c.name = name;
  c.device = tunebench::config::Device::Cpu;
  c.strategy = strategy;
  c.world_size = world;
  c.steps = 7;
  c.warmup = 2;
  return c;
}

}  // namespace

// Two CPU ranks on one host: each rank's forward and backward grow because they share the cores.
// The pair says the ranks compete for the CPU, ahead of the all-reduce (which runs on the same
// cores); one rank alone and GPU pairs get no such finding.
TEST(PairDiagnosis, CpuRanksOnOneHostCompeteForTheCpu) {
  using tunebench::protocol::Phase;
  SyntheticTrial one("cpu-1", cpu_config("cpu single", tunebench::config::Strategy::Single, 1), "cpu", 0);
  one.add_steps(2, 5, 320'000,
                {iv(Phase::Forward, 0, 100'000), iv(Phase::Backward, 100'000, 300'000),
                 iv(Phase::Optimizer, 300'000, 320'000)},
                512);
  SyntheticTrial two("cpu-2", cpu_config("cpu ddp x2", tunebench::config::Strategy::Ddp, 2), "cpu", 0);
  // Forward and backward 560 ms against 300 ms alone (+260 ms); exposed all-reduce 140 ms.
  two.add_steps(2, 5, 720'000,
                {iv(Phase::Forward, 0, 180'000), iv(Phase::Backward, 180'000, 560'000),
                 iv(Phase::AllReduce, 560'000, 700'000, 100'000'000, 0.13), iv(Phase::Optimizer, 700'000, 720'000)},
                512);
  const auto single = ta::analyze(one.log());
  const auto ddp = ta::analyze(two.log());
  EXPECT_EQ(ddp.ranks_per_host, 2);
  const auto p = ta::diagnose_pair(single, ddp);
  ASSERT_FALSE(p.findings.empty());
  const auto& top = p.findings.front();
  EXPECT_EQ(top.title.rfind("the ranks compete for the CPU (2 ranks on one host", 0), 0u) << top.title;
  EXPECT_NE(top.title.find("560 ms per step (mean) against 300 ms for one rank alone, +260 ms"), std::string::npos)
      << top.title;
  EXPECT_DOUBLE_EQ(top.impact_ms, 260.0);
  for (const auto& f : p.findings)
    if (f.kind == ta::FindingKind::CommBound)
      EXPECT_NE(f.detail.find("The ranks compete for the CPU"), std::string::npos) << f.detail;

  // The same pair on GPUs: no competition for a CPU.
  const auto gpu = ta::diagnose_pair(ta::analyze(single_gpu_trial().log()), ta::analyze(ddp_trial().log()));
  for (const auto& f : gpu.findings) EXPECT_EQ(f.title.find("compete for the CPU"), std::string::npos) << f.title;
}

// Trials whose steps differ by less than their own step-to-step spread say so in the headline;
// a difference beyond it (the DDP pair's 43 ms against steps that do not vary) does not.
TEST(PairDiagnosis, ADifferenceInsideTheStepSpreadIsCalledNoise) {
  using tunebench::protocol::Phase;
  auto varying = [](const char* id, const char* name, int64_t extra_us) {
    SyntheticTrial t(id, cpu_config(name, tunebench::config::Strategy::Single, 1), "cpu", 0);
    const int64_t steps_us[] = {300'000, 300'000, 260'000, 300'000, 340'000, 280'000, 320'000};
    for (int64_t i = 0; i < 7; ++i) {
      const int64_t us = steps_us[i] + extra_us;
      t.add_step(0, i, us, {iv(Phase::Forward, 0, us / 3), iv(Phase::Backward, us / 3, us)}, 512, i < 2);
    }
    return t;
  };
  const auto a = ta::analyze(varying("a", "a", 0).log());
  const auto b = ta::analyze(varying("b", "b", 4'000).log());
  ASSERT_GT(a.step_ms.iqr(), 4.0);
  const auto p = ta::diagnose_pair(a, b);
  EXPECT_NE(p.headline.find("; within noise: b and a differ by 4.0 ms, less than their step-to-step spread of " +
                            ta::format_ms(std::max(a.step_ms.iqr(), b.step_ms.iqr())) + " (p25 to p75)"),
            std::string::npos)
      << p.headline;
  const auto clear = ta::diagnose_pair(ta::analyze(single_gpu_trial().log()), ta::analyze(ddp_trial().log()));
  EXPECT_EQ(clear.headline.find("within noise"), std::string::npos) << clear.headline;
}
