// Kernel sampling through libtorch's profiler (core/engine/timing/kernel_sampler.h). This machine
// has no GPU: the profiler records the CPU ops, which proves the glue to profiler_kineto.h, the clock
// mapping and the phase windows; the kernels themselves are checked on recorded GPU logs
// (tests/data/gpu) and traces. apply() is checked with hand-made device activity.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "core/engine/timing/kernel_sampler.h"
#include "core/engine/timing/timeline.h"

namespace te = tunebench::engine;
namespace tbm = tunebench::metrics;
using tunebench::protocol::Interval;
using tunebench::protocol::Lane;
using tunebench::protocol::Phase;
using tunebench::protocol::now_us;

TEST(KernelSampler, RecordsTheHostsOpsOnTheHostClock) {
  te::KernelSampler sampler(/*cuda=*/false);
  te::Timeline timeline(false, true);
  ASSERT_TRUE(sampler.begin()) << sampler.problem();
  EXPECT_TRUE(sampler.active());
  const int64_t start = now_us();
  const int fwd = timeline.begin(Phase::Forward);
  at::Tensor a = at::ones({64, 64});
  at::Tensor b = at::mm(a, a);
  timeline.end(fwd);
  const int64_t end = now_us() + 1;
  timeline.collect(end);
  const tbm::StepActivity act = sampler.finish(start, end, timeline.host_windows());
  EXPECT_FALSE(sampler.active());
  EXPECT_TRUE(sampler.problem().empty()) << sampler.problem();
  EXPECT_TRUE(act.activities.empty());  // no GPU here
  EXPECT_EQ(act.start_us, start);
  bool saw_mm = false;
  for (const auto& op : act.host_ops) {
    EXPECT_EQ(op.name.rfind("tunebench::", 0), std::string::npos) << op.name;  // the clock scope is ours
    if (op.name == "aten::mm") {
      saw_mm = true;
      // On the host clock: inside the window we measured (a few µs of rounding allowed).
      EXPECT_GE(op.start_us, start - 50);
      EXPECT_LE(op.end_us, end + 50);
    }
  }
  EXPECT_TRUE(saw_mm);
  EXPECT_EQ(b.sum().item<float>(), 64.f * 64 * 64);
  // The phase window the launch of a kernel would be looked up in.
  ASSERT_EQ(timeline.host_windows().size(), 1u);
  EXPECT_EQ(timeline.host_windows()[0].phase, Phase::Forward);
  EXPECT_GE(timeline.host_windows()[0].start_us, start);
}

TEST(KernelSampler, TheTightestCalibrationBracketSetsTheClock) {
  // Profiler clock = host clock - 1000 ns. The first scope's thread lost its core before the scope
  // (a 600 ns bracket around a 10 ns scope); the third was read tightly.
  const std::vector<std::pair<int64_t, int64_t>> brackets = {{5000, 5600}, {7000, 7100}, {9000, 9020}};
  const std::vector<std::pair<int64_t, int64_t>> scopes = {{4590, 4600}, {6040, 6050}, {8005, 8015}};
  EXPECT_EQ(te::KernelSampler::clock_offset_ns(brackets, scopes), 1000);
  // The first alone would have been off by 290 ns.
  EXPECT_EQ(te::KernelSampler::clock_offset_ns({brackets[0]}, {scopes[0]}), 5300 - 4595);
  EXPECT_EQ(te::KernelSampler::clock_offset_ns(brackets, {}), 0);
}

TEST(KernelSampler, ApplyRebuildsTheComputeLaneFromTheKernels) {
  tunebench::protocol::Step step;
  step.start_us = 1000;
  step.end_us = 2000;
  step.step_ms = 1.0;
  step.intervals = {{Lane::Host, Phase::DataWait, 1000, 1100, "", 0, 0.0},
                    {Lane::Compute, Phase::Forward, 1100, 1500, "", 0, 0.0},  // the CUDA-event bracket
                    {Lane::Compute, Phase::Backward, 1500, 1900, "", 0, 0.0},
                    {Lane::Comm, Phase::AllReduce, 1700, 1950, "bucket 0", 1 << 20, 0.0}};
  tbm::StepActivity act;
  act.start_us = 1000;
  act.end_us = 2000;
  act.activities = {{1150, 1250, Lane::Compute, Phase::Forward, 1120},
                    {1600, 1800, Lane::Compute, Phase::Backward, 1550},
                    {1700, 1950, Lane::Comm, Phase::Other, 1690}};
  te::KernelSampler::apply(step, act, 2);
  EXPECT_TRUE(step.gpu_sampled);
  EXPECT_DOUBLE_EQ(step.gpu_busy_ms, (100 + 350) / 1000.0);  // 1150-1250, 1600-1950
  int64_t forward = 0, idle = 0;
  for (const auto& in : step.intervals) {
    if (in.phase == Phase::Forward) forward += in.duration_us();
    if (tunebench::protocol::is_gpu_idle(in.phase)) idle += in.duration_us();
  }
  EXPECT_EQ(forward, 100);
  EXPECT_EQ(idle, 1000 - 450);
  // Exposed: the all-reduce (CUDA events 1700-1950) not covered by compute kernels (1600-1800).
  EXPECT_DOUBLE_EQ(step.exposed_comm_ms, 0.15);
  EXPECT_DOUBLE_EQ(step.comm_ms, 0.25);
}
