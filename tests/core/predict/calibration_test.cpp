// Calibration recovers the efficiencies a synthetic device ran at, ignores trials of other devices
// and CUDA graphs, and measures contention from a multi-GPU trial once compute is known.
#include <gtest/gtest.h>

#include "core/predict/calibration.h"
#include "core/predict/precision.h"

namespace tc = tunebench::config;
namespace tp = tunebench::predict;
namespace hw = tunebench::hardware;
using tunebench::analysis::Part;

namespace {

const hw::GpuSpec& h200() { return *hw::find_gpu("h200"); }

// A trial whose phases are what the model gives at `eff` (plus `extra_backward_ms`).
tp::MeasuredTrial synthetic(const tc::TrialConfig& c, const tp::Efficiency& eff, double extra_backward_ms = 0,
                            double comm_ms = 0) {
  tp::MeasuredTrial t;
  t.label = c.name.empty() ? "synthetic" : c.name;
  t.config = c;
  t.device = "NVIDIA H200";
  t.gpu = &h200();
  t.transport = "NVIDIA H200, 1 host(s)";
  t.metrics.measured_steps = 8;
  const auto rates = *tp::device_rates(h200(), c);
  const auto mode = tp::execution_mode(c, true);
  const auto work = tp::step_work(c, tp::precision_of(c), mode);
  auto& b = t.metrics.breakdown;
  b.part_ms[static_cast<size_t>(Part::Forward)] = tp::phase_ms(work.forward, rates, eff.matmul_forward, eff, false);
  double backward = tp::phase_ms(work.backward, rates, eff.matmul_backward, eff, false);
  if (c.checkpointing) backward += tp::phase_ms(work.recompute, rates, eff.matmul_forward, eff, false);
  b.part_ms[static_cast<size_t>(Part::Backward)] = backward + extra_backward_ms;
  b.part_ms[static_cast<size_t>(Part::Optimizer)] = tp::phase_ms(work.optimizer, rates, eff.matmul_forward, eff, false);
  b.comm_ms = comm_ms;
  return t;
}

tp::Efficiency device_efficiency() {
  tp::Efficiency e = tp::default_efficiency();
  e.matmul_forward = 0.55;
  e.matmul_backward = 0.48;
  e.memory = 0.62;
  return e;
}

}  // namespace

TEST(Calibration, RecoversTheEfficienciesOfTheMeasuredDevice) {
  auto single = *tc::trial_preset("7b-single");
  auto ckpt = single;
  ckpt.checkpointing = true;
  const auto a = synthetic(single, device_efficiency());
  const auto b = synthetic(ckpt, device_efficiency());
  const auto cal = tp::calibrate({&a, &b}, h200());
  EXPECT_NEAR(cal.efficiency.matmul_forward, 0.55, 1e-3);
  EXPECT_NEAR(cal.efficiency.matmul_backward, 0.48, 1e-3);
  EXPECT_NEAR(cal.efficiency.memory, 0.62, 1e-3);
  EXPECT_EQ(cal.used.size(), 2u);
}

TEST(Calibration, IgnoresOtherDevicesGraphsOverlappedUpdatesAndFailedTrials) {
  auto c = *tc::trial_preset("7b-single");
  auto other = synthetic(c, device_efficiency());
  other.gpu = hw::find_gpu("rtx4090");
  auto graph = synthetic(c, device_efficiency());
  graph.config.compile = tc::Compile::Graph;
  auto overlapped = synthetic(c, device_efficiency());  // its backward holds the update
  overlapped.config.optimizer_overlap = true;
  auto oom = synthetic(c, device_efficiency());
  oom.metrics.oom = true;
  ASSERT_TRUE(synthetic(c, device_efficiency()).has_phases());
  EXPECT_FALSE(overlapped.has_phases());
  const auto cal = tp::calibrate({&other, &graph, &overlapped, &oom}, h200());
  EXPECT_FALSE(cal.calibrated());
  EXPECT_DOUBLE_EQ(cal.efficiency.matmul_forward, tp::default_efficiency().matmul_forward);
  EXPECT_FALSE(cal.notes.empty());
}

TEST(Calibration, ContentionIsTheComputeLostPerMillisecondOfHiddenCommunication) {
  auto single = *tc::trial_preset("7b-single");
  auto ddp = *tc::trial_preset("7b-ddp");
  const auto a = synthetic(single, device_efficiency());
  // 120 ms of all-reduce behind backward, which took 48 ms longer than the model's compute
  const auto b = synthetic(ddp, device_efficiency(), 48.0, 120.0);
  const auto cal = tp::calibrate({&a, &b}, h200());
  ASSERT_EQ(cal.contention.count(b.transport), 1u);
  EXPECT_NEAR(cal.contention.at(b.transport), 0.4, 1e-6);
}
