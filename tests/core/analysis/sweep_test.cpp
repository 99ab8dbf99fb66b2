// The sweep grid (validated, invalid points reported) and the sweep table.
#include "core/analysis/report.h"
#include "core/analysis/sweep.h"

#include <gtest/gtest.h>

#include "tests/core/analysis/synthetic_trial.h"

namespace ta = tunebench::analysis;
namespace tc = tunebench::config;
using namespace tunebench::testing;

TEST(Sweep, GridWithRepeatsAndInvalidCombinationsReported) {
  ta::SweepSpec spec;
  spec.base = *tc::trial_preset("cpu-tiny");
  spec.axes = {{"strategy", {"single", "ddp"}}, {"world_size", {"1", "2"}}};
  spec.repeats = 2;
  const auto plan = ta::plan_sweep(spec);
  EXPECT_TRUE(plan.spec_problems.empty());
  EXPECT_EQ(plan.grid_size, 4u);
  ASSERT_EQ(plan.trials.size(), 4u);  // (single,1) and (ddp,2), twice each
  EXPECT_EQ(plan.trials[0].values, (std::vector<std::string>{"single", "1"}));
  EXPECT_EQ(plan.trials[0].repeat, 0);
  EXPECT_EQ(plan.trials[1].repeat, 1);
  EXPECT_EQ(plan.trials[2].values, (std::vector<std::string>{"ddp", "2"}));
  EXPECT_EQ(plan.trials[2].config.strategy, tc::Strategy::Ddp);
  EXPECT_EQ(plan.trials[2].config.world_size, 2);
  EXPECT_EQ(plan.trials[2].config.name, "tiny on CPU [strategy=ddp, world_size=2] #1");
  ASSERT_EQ(plan.invalid.size(), 2u);
  EXPECT_EQ(plan.invalid[0].values, (std::vector<std::string>{"single", "2"}));
  EXPECT_EQ(plan.invalid[0].problems.at(0).key, "world_size");
  EXPECT_EQ(plan.invalid[1].values, (std::vector<std::string>{"ddp", "1"}));
}

TEST(Sweep, LastAxisVariesFastestAndBadValuesAreInvalidPoints) {
  ta::SweepSpec spec;
  spec.base = *tc::trial_preset("cpu-tiny");
  spec.axes = {{"micro_batch", {"2", "many"}}, {"grad_accum", {"1", "4"}}};
  const auto plan = ta::plan_sweep(spec);
  ASSERT_EQ(plan.trials.size(), 2u);
  EXPECT_EQ(plan.trials[0].values, (std::vector<std::string>{"2", "1"}));
  EXPECT_EQ(plan.trials[1].values, (std::vector<std::string>{"2", "4"}));
  EXPECT_EQ(plan.trials[1].config.grad_accum, 4);
  ASSERT_EQ(plan.invalid.size(), 2u);
  EXPECT_EQ(plan.invalid[0].problems.at(0).key, "micro_batch");
}

TEST(Sweep, SpecProblems) {
  ta::SweepSpec spec;
  spec.axes = {{"bucket_size", {"25"}}, {"grad_accum", {}}};
  spec.repeats = 0;
  const auto plan = ta::plan_sweep(spec);
  EXPECT_EQ(plan.spec_problems.size(), 3u);
  EXPECT_TRUE(plan.trials.empty());
}

TEST(Sweep, TableSortsNumericallyAndKeepsFailedPoints) {
  std::vector<ta::TrialMetrics> metrics;
  for (int mb : {16, 2, 4}) {
    tc::TrialConfig c = *tc::trial_preset("cpu-tiny");
    c.micro_batch = mb;
    SyntheticTrial t("mb" + std::to_string(mb), c, "cpu", 0);
    if (mb != 16) t.add_steps(0, 3, 1000 * mb, {}, mb * 128);  // 16 failed: no steps
    metrics.push_back(ta::analyze(t.log()));
  }
  const auto table = ta::sweep_table(metrics, {"micro_batch"});
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0].values[0], "2");
  EXPECT_EQ(table.rows[1].values[0], "4");
  EXPECT_EQ(table.rows[2].values[0], "16");
  EXPECT_DOUBLE_EQ(table.rows[1].step_ms.median, 4.0);
  EXPECT_DOUBLE_EQ(table.rows[1].tokens_per_s_per_gpu.median, 512 / 0.004);
  EXPECT_TRUE(table.rows[2].failed);

  const std::string text = ta::render_text(table);
  EXPECT_NE(text.find("micro_batch  repeats  step ms"), std::string::npos) << text;
  EXPECT_LT(text.find("\n2 "), text.find("\n4 ")) << text;
  EXPECT_NE(text.find("failed"), std::string::npos) << text;
  const auto j = ta::render_json(table);
  EXPECT_EQ(j["rows"][1]["values"][0], "4");
  EXPECT_DOUBLE_EQ(j["rows"][1]["step_ms"]["median"].get<double>(), 4.0);
  EXPECT_TRUE(j["rows"][2]["step_ms"].is_null());
}

// Tokens per joule (metrics/energy.h through the trial's metrics) is a column of the sweep: the
// row's figure, or "-" where a trial has none (CPU trials).
TEST(Sweep, TheTableCarriesTokensPerJouleWhereTheTrialsHaveIt) {
  std::vector<ta::TrialMetrics> metrics;
  for (int mb : {2, 4}) {
    tc::TrialConfig c = *tc::trial_preset("cpu-tiny");
    c.micro_batch = mb;
    SyntheticTrial t("mb" + std::to_string(mb), c, "cpu", 0);
    t.add_steps(0, 3, 1000 * mb, {}, mb * 128);
    metrics.push_back(ta::analyze(t.log()));
  }
  ASSERT_FALSE(metrics[0].tokens_per_joule) << "a CPU trial has no energy readings";
  EXPECT_NE(metrics[0].energy_problem.find("no energy readings"), std::string::npos) << metrics[0].energy_problem;
  metrics[1].tokens_per_joule = 12.3;  // as a GPU trial's would be
  const auto table = ta::sweep_table(metrics, {"micro_batch"});
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_FALSE(table.rows[0].tokens_per_joule);
  ASSERT_TRUE(table.rows[1].tokens_per_joule);
  EXPECT_DOUBLE_EQ(*table.rows[1].tokens_per_joule, 12.3);
  const std::string text = ta::render_text(table);
  EXPECT_NE(text.find("tokens/J"), std::string::npos) << text;
  EXPECT_NE(text.find("12.3"), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(ta::render_json(table)["rows"][1]["tokens_per_joule"].get<double>(), 12.3);
  EXPECT_TRUE(ta::render_json(table)["rows"][0]["tokens_per_joule"].is_null());
}
