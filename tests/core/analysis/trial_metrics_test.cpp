// Per-trial metrics on hand-made logs: step time, throughput, MFU, communication, floors, memory.
#include "core/analysis/trial_metrics.h"

#include <gtest/gtest.h>

#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
namespace tc = tunebench::config;
namespace tp = tunebench::protocol;
using namespace tunebench::testing;
using tp::Phase;
using Part = ta::Part;

TEST(TrialMetrics, SingleGpuStepThroughputAndBreakdown) {
  const auto m = ta::analyze(single_gpu_trial().log());
  EXPECT_EQ(m.trial, "single-1");
  EXPECT_EQ(m.label, "single");
  EXPECT_EQ(m.measured_steps, 5);  // warm-up excluded
  EXPECT_DOUBLE_EQ(m.step_ms.median, 100.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_step, 4096);
  EXPECT_DOUBLE_EQ(m.tokens_per_s_total.median, 40960.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_s_per_gpu.median, 40960.0);
  EXPECT_DOUBLE_EQ(m.breakdown[Part::Forward], 30.0);
  EXPECT_DOUBLE_EQ(m.breakdown[Part::Backward], 60.0);
  EXPECT_DOUBLE_EQ(m.breakdown[Part::Optimizer], 10.0);
  EXPECT_DOUBLE_EQ(m.breakdown.step_ms, 100.0);
  EXPECT_FALSE(m.has_comm());
  EXPECT_FALSE(m.hidden_fraction.has_value());
  EXPECT_FALSE(m.comm_floor_ms.has_value());
  EXPECT_EQ(m.representative_step, 2);  // all equal: the first measured step
}

TEST(TrialMetrics, DdpCommunicationExposedHiddenBandwidthAndFloor) {
  const auto m = ta::analyze(ddp_trial().log());
  EXPECT_EQ(m.world_size, 2);
  EXPECT_DOUBLE_EQ(m.step_ms.median, 143.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_step, 8192);
  EXPECT_NEAR(m.tokens_per_s_total.median, 8192 / 0.143, 1e-6);
  EXPECT_NEAR(m.tokens_per_s_per_gpu.median, 4096 / 0.143, 1e-6);
  EXPECT_DOUBLE_EQ(m.comm_ms.median, 73.0);  // 35 hidden + 38 exposed
  EXPECT_DOUBLE_EQ(m.exposed_comm_ms.median, 38.0);
  EXPECT_DOUBLE_EQ(m.data_wait_ms.median, 5.0);
  ASSERT_TRUE(m.hidden_fraction);
  EXPECT_NEAR(*m.hidden_fraction, 35.0 / 73.0, 1e-12);
  ASSERT_TRUE(m.busbw_gbps);
  EXPECT_NEAR(*m.busbw_gbps, 310.0, 1e-9);
  EXPECT_EQ(m.grad_bytes_per_step, 13'500'000'000);
  // Ring all-reduce on 2 ranks: 2(n-1)/n = 1, so 13.5 GB cross the bus: 13.5e9 / 310e9 s = 43.548 ms.
  EXPECT_DOUBLE_EQ(m.bus_bytes_per_step, 13.5e9);
  ASSERT_TRUE(m.comm_floor_ms);
  EXPECT_NEAR(*m.comm_floor_ms, 13.5e9 / 310e9 * 1e3, 1e-9);
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.ranks[1].breakdown[Part::ExposedComm], 38.0);
  const auto steps = ta::rank_breakdowns(ddp_trial().log(), 1);
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps.front().step, 2);
  EXPECT_EQ(steps.front().breakdown[Part::ExposedComm], 38'000);
}

TEST(TrialMetrics, BytesWeightedBusBandwidthAndBandwidthFromDurations) {
  tc::TrialConfig c;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 4;
  SyntheticTrial t("bw", c);
  // 1 GB at 100 GB/s and 3 GB at 300 GB/s (given): bytes-weighted (1*100 + 3*300) / 4 = 250.
  t.add_steps(0, 1, 100'000,
              {iv(Phase::AllReduce, 0, 10'000, 1'000'000'000, 100.0),
               iv(Phase::AllReduce, 10'000, 20'000, 3'000'000'000, 300.0)},
              10);
  auto m = ta::analyze(t.log());
  ASSERT_TRUE(m.busbw_gbps);
  EXPECT_NEAR(*m.busbw_gbps, 250.0, 1e-9);
  // Factor 2(n-1)/n = 1.5 on 4 ranks: 4 GB * 1.5 = 6 GB on the bus, floor 6e9 / 250e9 s = 24 ms.
  EXPECT_DOUBLE_EQ(m.bus_bytes_per_step, 6e9);
  EXPECT_NEAR(*m.comm_floor_ms, 24.0, 1e-9);

  // Without busbw in the event: 1 GB in 10 ms on 4 ranks = 100 GB/s algbw, * 1.5 = 150 GB/s busbw.
  SyntheticTrial u("bw2", c);
  u.add_steps(0, 1, 100'000, {iv(Phase::AllReduce, 0, 10'000, 1'000'000'000)}, 10);
  m = ta::analyze(u.log());
  EXPECT_NEAR(*m.busbw_gbps, 150.0, 1e-9);
}

TEST(TrialMetrics, MfuOfTheSevenBReferenceRunUsesThePalmFormula) {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  SyntheticTrial t("7b", c, "NVIDIA H200", 150'000'000'000);
  t.add_steps(3, 8, 268'000, {iv(Phase::Forward, 0, 90'000), iv(Phase::Backward, 90'000, 268'000)}, 2048);
  const auto m = ta::analyze(t.log());
  ASSERT_TRUE(m.mfu);
  // The H200's dense bf16 peak is the hardware catalogue's: 989.4 TFLOP/s.
  EXPECT_NEAR(*m.mfu, 2048 / 0.268 * 42'863'689'728.0 / 989.4e12, 1e-12);
  EXPECT_NEAR(*m.mfu, 0.331, 0.001);  // docs/BENCHMARKS.md, "PyTorch reference figures": 33.1 % for 268 ms
}

TEST(TrialMetrics, UnknownDeviceHasNoMfu) {
  tc::TrialConfig c;
  SyntheticTrial t("cpu", c, "cpu", 0);
  t.add_steps(0, 3, 10'000, {iv(Phase::Forward, 0, 10'000)}, 512);
  const auto m = ta::analyze(t.log());
  EXPECT_TRUE(m.flops_per_token);
  EXPECT_FALSE(m.mfu);
}

TEST(TrialMetrics, ScalingEfficiencyIsThroughputPerGpuRatio) {
  const auto single = ta::analyze(forum_single_trial().log());
  const auto ddp = ta::analyze(forum_ddp_trial().log());
  // Single: 4096 / 1.2 s; DDP: 8192 / 1.5 s over 2 GPUs = 4096 / 1.5 s per GPU -> 1.2 / 1.5 = 0.8.
  ASSERT_TRUE(ta::scaling_efficiency(ddp, single));
  EXPECT_NEAR(*ta::scaling_efficiency(ddp, single), 0.8, 1e-12);
  EXPECT_NEAR(ddp.tokens_per_s_total.median / single.tokens_per_s_total.median, 1.6, 1e-12);
}

TEST(TrialMetrics, CriticalRankSetsTheStepAndItsBreakdown) {
  tc::TrialConfig c;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  SyntheticTrial t("crit", c);
  t.add_step(0, 0, 100'000, {iv(Phase::Forward, 0, 100'000)}, 100);
  t.add_step(1, 0, 120'000, {iv(Phase::DataWait, 0, 20'000), iv(Phase::Forward, 20'000, 120'000)}, 100);
  const auto m = ta::analyze(t.log());
  EXPECT_DOUBLE_EQ(m.step_ms.median, 120.0);
  EXPECT_DOUBLE_EQ(m.breakdown[Part::DataWait], 20.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_step, 200);
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.ranks[0].step_ms.median, 100.0);
}

TEST(TrialMetrics, RepeatsArePooled) {
  tc::TrialConfig c;
  SyntheticTrial a("r1", c), b("r2", c);
  for (int i = 0; i < 3; ++i)
    a.add_step(0, i, 10'000 + i * 1000, {}, 100);  // 10, 11, 12 ms
  for (int i = 0; i < 3; ++i)
    b.add_step(0, i, 20'000 + i * 1000, {}, 100);  // 20, 21, 22 ms
  const auto la = a.log(), lb = b.log();
  const auto m = ta::analyze_pooled({&la, &lb});
  EXPECT_EQ(m.measured_steps, 6);
  EXPECT_DOUBLE_EQ(m.step_ms.median, 16.0);
  EXPECT_DOUBLE_EQ(m.step_ms.p25, 11.25);
  EXPECT_EQ(m.repeat_ids.size(), 2u);
}

TEST(TrialMetrics, MemoryPeakRetriesAndOom) {
  tc::TrialConfig c;
  SyntheticTrial t("mem", c, "NVIDIA H200", 100'000'000'000);
  t.set_memory(95'000'000'000, 3);
  t.add_steps(1, 2, 10'000, {}, 10);
  t.add_error(0, "oom", "CUDA out of memory");
  const auto m = ta::analyze(t.log());
  EXPECT_EQ(m.peak_bytes, 95'000'000'000);
  EXPECT_EQ(m.alloc_retries, 3);
  ASSERT_TRUE(m.peak_fraction);
  EXPECT_DOUBLE_EQ(*m.peak_fraction, 0.95);
  EXPECT_TRUE(m.oom);
  ASSERT_EQ(m.errors.size(), 1u);
}

TEST(TrialMetrics, GpuUtilisationOnlyDuringMeasuredSteps) {
  tc::TrialConfig c;
  SyntheticTrial t("util", c);
  t.add_steps(1, 2, 10'000, {iv(Phase::Forward, 0, 10'000)}, 10);  // measured: [10, 30) ms
  t.add_gpu_sample(0, 5'000, 10.0);                                // warm-up: ignored
  t.add_gpu_sample(0, 15'000, 80.0);
  t.add_gpu_sample(0, 25'000, 90.0);
  t.add_gpu_sample(0, 45'000, 0.0);  // after the run: ignored
  const auto m = ta::analyze(t.log());
  ASSERT_TRUE(m.gpu_util_pct);
  EXPECT_DOUBLE_EQ(*m.gpu_util_pct, 85.0);
}
