// The planner: which variants for which baseline, in which order, and what is skipped and why.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/analysis/trial_metrics.h"
#include "core/investigate/planner.h"
#include "tests/core/investigate/planted_trials.h"

namespace ti = tunebench::investigate;
namespace tc = tunebench::config;
namespace tt = tunebench::testing;

namespace {

tunebench::analysis::TrialMetrics measured(const tc::TrialConfig& c, const tt::PlantedModel& m) {
  std::mt19937_64 rng(1);
  return tunebench::analysis::analyze(tt::planted_trial(c, m, rng, "base"));
}

tc::TrialConfig gpu(tc::Strategy s, int world) {
  tc::TrialConfig c;
  c.name = "base";
  c.device = tc::Device::Cuda;
  c.strategy = s;
  c.world_size = world;
  c.amp = tc::Amp::Bf16;
  c.steps = 10;
  c.warmup = 2;
  return c;
}

const ti::Variant* find(const ti::InvestigationPlan& p, const std::string& title_part) {
  for (const auto& v : p.variants)
    if (v.title.find(title_part) != std::string::npos) return &v;
  return nullptr;
}

bool skipped(const ti::InvestigationPlan& p, const std::string& title_part, const std::string& reason_part) {
  return std::any_of(p.skipped.begin(), p.skipped.end(), [&](const auto& s) {
    return s.title.find(title_part) != std::string::npos && s.reason.find(reason_part) != std::string::npos;
  });
}

}  // namespace

TEST(Planner, DataBoundSingleGpuTriesLoaderThreadsFirstAndNoCommunication) {
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  const auto plan = ti::plan_investigation(measured(gpu(tc::Strategy::Single, 1), m), 7);
  ASSERT_FALSE(plan.variants.empty());
  EXPECT_EQ(plan.variants.front().config.num_workers > 0, true) << plan.variants.front().title;
  EXPECT_EQ(plan.variants.front().category, ti::Category::Data);
  EXPECT_EQ(plan.variants.front().source.rfind("diagnosis", 0), 0u);
  for (const auto& v : plan.variants) {
    EXPECT_NE(v.category, ti::Category::Communication) << v.title;
    EXPECT_TRUE(tc::validate(v.config).empty()) << v.title;
    EXPECT_NE(v.config, plan.baseline) << v.title;
  }
  EXPECT_TRUE(skipped(plan, "communication", "single rank"));
  EXPECT_NE(find(plan, "micro_batch 8"), nullptr);
  EXPECT_NE(find(plan, "compile fused"), nullptr);
  EXPECT_EQ(plan.baseline_trial, 7);
}

TEST(Planner, DdpWithoutPeerToPeerTriesTransportCompressionAccumulationAndZero) {
  auto c = gpu(tc::Strategy::Ddp, 2);
  c.nccl_env["NCCL_P2P_DISABLE"] = "1";
  tt::PlantedModel m;
  m.exposed_comm_ms = 60;
  const auto plan = ti::plan_investigation(measured(c, m), 1);
  for (const char* t : {"NCCL_P2P_DISABLE unset", "compression bf16", "grad_accum 2", "ZeRO-2", "ZeRO-3", "bucket_mb"}) {
    const auto* v = find(plan, t);
    ASSERT_NE(v, nullptr) << t;
    EXPECT_EQ(v->category, ti::Category::Communication) << t;
  }
  EXPECT_TRUE(find(plan, "NCCL_P2P_DISABLE unset")->config.nccl_env.empty());
  EXPECT_EQ(find(plan, "ZeRO-2")->config.fsdp_mode, tc::FsdpMode::ShardGradOp);
  EXPECT_TRUE(skipped(plan, "NCCL_ALGO", "2 ranks"));
  // No variant twice (the diagnosis and the forum both suggest some).
  for (size_t i = 0; i < plan.variants.size(); ++i)
    for (size_t j = i + 1; j < plan.variants.size(); ++j) {
      auto a = plan.variants[i].config, b = plan.variants[j].config;
      a.name = b.name = "";
      EXPECT_NE(a, b) << plan.variants[i].title << " / " << plan.variants[j].title;
    }
}

TEST(Planner, VariantsThePredictionSaysCannotFitAreSkippedWithTheReason) {
  auto c = *tc::trial_preset("7b-single");
  c.steps = 10;
  c.warmup = 2;
  std::mt19937_64 rng(1);
  tt::PlantedModel m;
  const auto metrics = tunebench::analysis::analyze(tt::planted_trial(c, m, rng, "7b"));
  ti::PlanOptions o;
  o.device_memory_bytes = int64_t{80} << 30;  // an 80 GiB GPU: 7B with AdamW in fp32 state cannot double its batch
  const auto plan = ti::plan_investigation(metrics, 1, o);
  EXPECT_TRUE(std::any_of(plan.skipped.begin(), plan.skipped.end(),
                          [](const auto& s) { return s.reason.rfind("does not fit: predicted", 0) == 0; }));
  EXPECT_EQ(find(plan, "micro_batch 2"), nullptr);
  // Unlimited memory: the same variant is planned.
  o.device_memory_bytes = int64_t{4096} << 30;
  EXPECT_NE(find(ti::plan_investigation(metrics, 1, o), "micro_batch 2"), nullptr);
}

TEST(Planner, PlanRoundTripsThroughJson) {
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  const auto plan = ti::plan_investigation(measured(gpu(tc::Strategy::Ddp, 2), m), 3);
  const auto back = ti::plan_from_json(ti::to_json(plan));
  EXPECT_EQ(ti::to_json(back), ti::to_json(plan));
  EXPECT_THROW(ti::plan_from_json(nlohmann::json::object()), std::runtime_error);
}

TEST(Planner, ATraceWithUnknownSettingsIsRefusedWithWhatToDo) {
  tt::PlantedModel m;
  auto metrics = measured(gpu(tc::Strategy::Single, 1), m);
  metrics.unknown_knobs = {"micro_batch"};
  try {
    ti::plan_investigation(metrics, 1);
    FAIL() << "planned a trial with unknown settings";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("micro_batch"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("settings"), std::string::npos);
  }
}

TEST(Planner, HostBoundPlansTheCudaGraphFirst) {
  // What kernel sampling found on the tiny model on an H200: the GPU ran kernels 14 % of the step.
  auto metrics = measured(gpu(tc::Strategy::Single, 1), tt::PlantedModel{});
  auto& b = metrics.breakdown;
  b.part_ms.fill(0.0);
  namespace ta = tunebench::analysis;
  b.part_ms[size_t(ta::Part::Forward)] = 0.05 * b.step_ms;
  b.part_ms[size_t(ta::Part::Backward)] = 0.08 * b.step_ms;
  b.part_ms[size_t(ta::Part::Optimizer)] = 0.01 * b.step_ms;
  b.part_ms[size_t(ta::Part::HostWait)] = 0.70 * b.step_ms;
  b.part_ms[size_t(ta::Part::LaunchGap)] = 0.15 * b.step_ms;
  b.part_ms[size_t(ta::Part::SyncWait)] = 0.01 * b.step_ms;
  metrics.gpu_busy_share = 0.14;
  metrics.sampled_steps = 2;
  const auto plan = ti::plan_investigation(metrics, 1);
  EXPECT_EQ(plan.diagnosis.rfind("host-bound: the GPU is idle 86 % of the step", 0), 0u) << plan.diagnosis;
  ASSERT_GE(plan.variants.size(), 3u);
  EXPECT_EQ(plan.variants[0].title, "compile graph");
  EXPECT_EQ(plan.variants[0].source, "diagnosis: host-bound");
  EXPECT_EQ(plan.variants[0].config.compile, tc::Compile::Graph);
  EXPECT_EQ(plan.variants[1].title, "micro_batch 8");
  EXPECT_EQ(plan.variants[2].title, "compile fused");
}

// Issue 44: a plan offered num_workers at 0.0 ms data wait and checkpointing at 3 % memory. A
// suspect that cannot help the measured trial is skipped, with the figure that says so.
TEST(Planner, SuspectsThatCannotHelpTheMeasuredTrialAreSkippedWithTheFigure) {
  tt::PlantedModel m;  // no data wait at all
  auto baseline = measured(gpu(tc::Strategy::Single, 1), m);
  baseline.device_memory_bytes = int64_t(80) << 30;
  baseline.peak_fraction = 0.03;
  const auto plan = ti::plan_investigation(baseline, 7);
  EXPECT_EQ(find(plan, "num_workers"), nullptr);
  EXPECT_TRUE(skipped(plan, "num_workers", "cannot help: the data wait is 0.0 ms")) << plan.skipped.size();
  EXPECT_EQ(find(plan, "checkpointing"), nullptr);
  EXPECT_TRUE(skipped(plan, "checkpointing", "uses 3.0 % of the device's memory"));

  // With the data wait and the memory that make them worth a try, they are planned.
  m.data_wait_ms_no_workers = 43;
  baseline = measured(gpu(tc::Strategy::Single, 1), m);
  baseline.peak_fraction = 0.9;
  const auto busy = ti::plan_investigation(baseline, 7);
  EXPECT_NE(find(busy, "num_workers"), nullptr);
  EXPECT_NE(find(busy, "checkpointing"), nullptr);
}
