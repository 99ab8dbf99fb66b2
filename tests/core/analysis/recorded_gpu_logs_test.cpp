// The analysis on real event logs recorded on H200s (tests/data/gpu, docs/BENCHMARKS.md). The
// expected answers are computed here by hand from the raw intervals, independently of the
// analysis code, and cross-checked against what the worker itself reported in each step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/analysis/diagnosis.h"
#include "core/analysis/phase_breakdown.h"
#include "core/analysis/trial_metrics.h"
#include "core/protocol/trial_log.h"

namespace ta = tunebench::analysis;
namespace tp = tunebench::protocol;

namespace {
tp::TrialLog load(const char* name) {
  return tp::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) + "/gpu/" + name);
}
}  // namespace

TEST(RecordedGpuLogs, BreakdownOfEveryStepSumsToItsDuration) {
  for (const char* name : {"h200-7b-single.jsonl", "h200x2-7b-ddp-ckpt.jsonl", "h200x2-7b-fsdp-full-shard.jsonl",
                           "h200x2-7b-ddp-ckpt-no-p2p.jsonl"}) {
    const auto log = load(name);
    ASSERT_TRUE(log.problems.empty()) << name;
    for (const auto& [rank, r] : log.ranks)
      for (const auto& step : r.steps) {
        const auto b = ta::breakdown_of(step);
        int64_t sum = 0;
        for (auto us : b.part_us) sum += us;
        EXPECT_EQ(sum, step.end_us - step.start_us) << name << " rank " << rank << " step " << step.step;
        // The worker computed exposed communication on its own (core/engine/timing): same answer.
        // (Warm-up step 0 of these recordings also holds DDP's start-up broadcast, timed before
        // the step began; the analysis clips it to the step, the worker then did not. Fixed since.)
        if (step.warmup) continue;
        EXPECT_NEAR(b.exposed_comm_us() / 1000.0, step.exposed_comm_ms, 0.01) << name << " step " << step.step;
      }
  }
}

TEST(RecordedGpuLogs, DdpOverNvlinkHidesItsAllReduceAndP2pDisabledDoesNot) {
  const auto nvlink = ta::analyze(load("h200x2-7b-ddp-ckpt.jsonl"));
  const auto host = ta::analyze(load("h200x2-7b-ddp-ckpt-no-p2p.jsonl"));
  // Every fp32 gradient of the 6.74 B parameters travels once per step: 26.95 GB.
  EXPECT_NEAR(nvlink.grad_bytes_per_step / 1e9, 4.0 * 6738415616 / 1e9, 0.01);
  ASSERT_TRUE(nvlink.hidden_fraction && host.hidden_fraction);
  EXPECT_GT(*nvlink.hidden_fraction, 0.95);
  EXPECT_LT(*host.hidden_fraction, 0.5);
  ASSERT_TRUE(nvlink.busbw_gbps && host.busbw_gbps);
  EXPECT_GT(*nvlink.busbw_gbps, 150.0);  // NVLink
  EXPECT_LT(*host.busbw_gbps, 40.0);     // through host memory
  // The floor is bytes on the bus over bus bandwidth: 2(n-1)/n = 1 for two ranks.
  ASSERT_TRUE(host.comm_floor_ms);
  EXPECT_NEAR(*host.comm_floor_ms, host.bus_bytes_per_step / (*host.busbw_gbps * 1e9) * 1000.0, 1e-6);
  // and the diagnosis names communication as the cause on the slow link only
  const auto d = ta::diagnose(host);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().kind, ta::FindingKind::CommBound) << d.findings.front().title;
  for (const auto& f : ta::diagnose(nvlink).findings) EXPECT_NE(f.kind, ta::FindingKind::CommBound) << f.title;
}

TEST(RecordedGpuLogs, ScalingEfficiencyIsThroughputPerGpuOverSingle) {
  const auto single = ta::analyze(load("h200-7b-single.jsonl"));
  const auto fsdp = ta::analyze(load("h200x2-7b-fsdp-full-shard.jsonl"));
  // By hand from the done summaries: tokens/s of rank 0 (each rank does 2048 tokens per step).
  const auto single_log = load("h200-7b-single.jsonl");
  const auto fsdp_log = load("h200x2-7b-fsdp-full-shard.jsonl");
  const double single_tps = single_log.ranks.at(0).done->summary.tokens_per_s;
  const double fsdp_tps = fsdp_log.ranks.at(0).done->summary.tokens_per_s;
  const auto eff = ta::scaling_efficiency(fsdp, single);
  ASSERT_TRUE(eff);
  // The analysis takes the slowest rank per step, the summary rank 0's median: within 2 %.
  EXPECT_NEAR(*eff, fsdp_tps / single_tps, 0.02 * fsdp_tps / single_tps);
  EXPECT_EQ(fsdp.world_size, 2);
  ASSERT_TRUE(fsdp.mfu && single.mfu);
  EXPECT_NEAR(*single.mfu, single_log.ranks.at(0).done->summary.mfu, 0.005);
}
