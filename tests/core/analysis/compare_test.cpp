// Comparison: config diff, metric ratios with spread, pooling, and throughput said in words.
#include "core/analysis/compare.h"

#include <gtest/gtest.h>

#include "core/analysis/format.h"
#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
using namespace tunebench::testing;

namespace {
const ta::MetricRow* row(const ta::Comparison& c, const std::string& key) {
  for (const auto& r : c.metrics)
    if (r.key == key) return &r;
  return nullptr;
}
}  // namespace

TEST(Compare, SlowerStepButHigherThroughputInWords) {
  const auto single = ta::analyze(forum_single_trial().log());
  const auto ddp = ta::analyze(forum_ddp_trial().log());
  const std::string s = ta::throughput_statement(single, ddp);
  EXPECT_NE(s.find("the step is slower (1.50 s vs 1.20 s median, +25 %)"), std::string::npos) << s;
  EXPECT_NE(s.find("2.00x the tokens (8,192 vs 4,096)"), std::string::npos) << s;
  EXPECT_NE(s.find("total throughput is 1.60x (5,461 vs 3,413 tokens/s)"), std::string::npos) << s;
  EXPECT_NE(s.find("per GPU 0.80x"), std::string::npos) << s;
  // The other way round the step is faster and the throughput lower: no "slower but more" claim.
  const std::string back = ta::throughput_statement(ddp, single);
  EXPECT_EQ(back.find("slower steps, more work"), std::string::npos) << back;
  EXPECT_NE(back.find("total throughput is 0.6"), std::string::npos) << back;  // 1 / 1.6 = 0.625
}

TEST(Compare, DiffRatiosSpreadAndScalingEfficiency) {
  std::vector<ta::TrialMetrics> trials{ta::analyze(forum_ddp_trial().log()), ta::analyze(forum_single_trial().log())};
  EXPECT_EQ(ta::default_baseline(trials), 1u);  // the single-GPU trial
  const auto c = ta::compare(trials, 1);
  ASSERT_EQ(c.trials.size(), 2u);
  ASSERT_GE(c.config_diff.size(), 2u);
  bool strategy = false;
  for (const auto& d : c.config_diff) {
    EXPECT_NE(d.key, "name");  // the free-text name is not a knob difference
    if (d.key == "strategy") {
      strategy = true;
      EXPECT_EQ(d.values, (std::vector<std::string>{"ddp", "single"}));
    }
  }
  EXPECT_TRUE(strategy);
  const auto* step = row(c, "step_ms");
  ASSERT_TRUE(step);
  ASSERT_TRUE(step->ratio[0]);
  EXPECT_NEAR(*step->ratio[0], 1.25, 1e-12);
  EXPECT_NEAR(*step->delta[0], 300.0, 1e-9);
  EXPECT_FALSE(step->ratio[1]);  // the baseline has no ratio to itself
  const auto* total = row(c, "tokens_per_s_total");
  ASSERT_TRUE(total);
  EXPECT_NEAR(*total->ratio[0], 1.6, 1e-12);
  EXPECT_NEAR(*total->ratio_low[0], 1.6, 1e-12);  // no spread in synthetic steps
  ASSERT_TRUE(c.single_reference);
  EXPECT_NEAR(*c.scaling_efficiency[0], 0.8, 1e-12);
  EXPECT_FALSE(c.scaling_efficiency[1]);  // the single-GPU reference has no scaling to itself
  ASSERT_EQ(c.throughput_statements.size(), 1u);
}

TEST(Compare, NoScalingEfficiencyBetweenTrialsOfOneWorldSize) {
  // Two single-GPU trials, one 8x faster: "scaling efficiency 809.9 %" was their throughput ratio.
  tunebench::config::TrialConfig cfg;
  cfg.world_size = 1;
  SyntheticTrial eager("eager", cfg), graph("graph", cfg);
  for (int i = 0; i < 5; ++i) {
    eager.add_step(0, i, 9'800, {}, 1024);
    graph.add_step(0, i, 1'210, {}, 1024);
  }
  const auto c = ta::compare({ta::analyze(eager.log()), ta::analyze(graph.log())});
  ASSERT_EQ(c.scaling_efficiency.size(), 2u);
  EXPECT_FALSE(c.scaling_efficiency[0]);
  EXPECT_FALSE(c.scaling_efficiency[1]);
}

TEST(Compare, RatiosWithinTheNoiseAreNeitherBetterNorWorse) {
  tunebench::config::TrialConfig cfg;
  SyntheticTrial a("a", cfg), b("b", cfg), c("c", cfg);
  for (int i = 0; i < 8; ++i) {
    a.add_step(0, i, 100'000 + (i % 4) * 4'000, {}, 100);  // 100..112 ms
    b.add_step(0, i, 101'000 + (i % 4) * 4'000, {}, 100);  // 1 % slower: inside both spreads
    c.add_step(0, i, 130'000 + (i % 4) * 4'000, {}, 100);  // 30 % slower: beyond them
  }
  const auto cmp = ta::compare({ta::analyze(a.log()), ta::analyze(b.log()), ta::analyze(c.log())});
  const auto* step = row(cmp, "step_ms");
  ASSERT_TRUE(step);
  ASSERT_EQ(step->beyond_noise.size(), 3u);
  EXPECT_FALSE(step->beyond_noise[0]);  // the baseline
  EXPECT_FALSE(step->beyond_noise[1]);
  EXPECT_TRUE(step->beyond_noise[2]);
  // A time too small to matter against the step is never a regression, whatever its ratio.
  const ta::Spread tiny_a = ta::spread_of_value(0.1), tiny_b = ta::spread_of_value(0.3);
  EXPECT_FALSE(ta::beyond_noise(tiny_a, tiny_b, "ms", ta::analyze(a.log()), ta::analyze(c.log())));
  EXPECT_TRUE(ta::beyond_noise(tiny_a, tiny_b, "%", ta::analyze(a.log()), ta::analyze(c.log())));
}

// Values that both show as zero at the metric's decimals (a data wait of 0.01 ms against 0.03 ms
// shows "0.0" twice) have no ratio and no direction: never "0.33x", never coloured.
TEST(Compare, ValuesBelowTheDisplayThresholdHaveNoRatio) {
  using tunebench::protocol::Phase;
  tunebench::config::TrialConfig cfg;
  SyntheticTrial a("a", cfg), b("b", cfg);
  a.add_steps(0, 4, 100'000, {iv(Phase::DataWait, 0, 10), iv(Phase::Forward, 10, 100'000)}, 100);
  b.add_steps(0, 4, 100'000, {iv(Phase::DataWait, 0, 30), iv(Phase::Forward, 30, 100'000)}, 100);
  const auto cmp = ta::compare({ta::analyze(a.log()), ta::analyze(b.log())});
  const auto* wait = row(cmp, "data_wait_ms");
  ASSERT_TRUE(wait);
  ASSERT_TRUE(wait->values[0] && wait->values[1]);
  EXPECT_EQ(ta::format_metric_value(wait->values[1]->median, "ms"), "0.0");
  EXPECT_FALSE(wait->ratio[1]);
  EXPECT_FALSE(wait->beyond_noise[1]);
  EXPECT_EQ(ta::standing(*wait, 1), ta::Standing::Neither);
  // Shown values keep their ratio: the step times (100.0 ms both) read 1.00x.
  const auto* step = row(cmp, "step_ms");
  ASSERT_TRUE(step && step->ratio[1]);
  EXPECT_TRUE(ta::shows_as_zero(0.04, "ms"));
  EXPECT_FALSE(ta::shows_as_zero(0.05, "ms"));
  EXPECT_FALSE(ta::shows_as_zero(0.131, "GB/s"));  // a CPU's link speed shows as 0.131, not 0
  EXPECT_EQ(ta::format_metric_value(0.1314, "GB/s") + " GB/s", ta::format_gbps(0.1314));  // the diagnosis's figure
  EXPECT_EQ(ta::format_metric_value(310.2, "GB/s") + " GB/s", ta::format_gbps(310.2));
}

TEST(Compare, RatioRangeComesFromTheQuartiles) {
  tunebench::config::TrialConfig cfg;
  SyntheticTrial a("a", cfg), b("b", cfg);
  for (int i = 0; i < 5; ++i)
    a.add_step(0, i, 100'000 + i * 10'000, {}, 100);  // 100..140: p25 110, p75 130
  for (int i = 0; i < 5; ++i)
    b.add_step(0, i, 200'000 + i * 20'000, {}, 100);  // 200..280: p25 220, p75 260
  const auto c = ta::compare({ta::analyze(a.log()), ta::analyze(b.log())}, 0);
  const auto* step = row(c, "step_ms");
  EXPECT_NEAR(*step->ratio[1], 240.0 / 120.0, 1e-12);
  EXPECT_NEAR(*step->ratio_low[1], 220.0 / 130.0, 1e-12);
  EXPECT_NEAR(*step->ratio_high[1], 260.0 / 110.0, 1e-12);
  EXPECT_NEAR(step->values[1]->iqr(), 40.0, 1e-12);
}

TEST(Compare, RepeatsOfOneConfigArePooledIntoOneColumn) {
  auto first = single_gpu_trial();
  auto second = SyntheticTrial("single-2", single_gpu_trial().log().config().is_object()
                                               ? tunebench::config::from_json(single_gpu_trial().log().config()).config
                                               : tunebench::config::TrialConfig{});
  second.add_steps(0, 3, 110'000, {}, 4096);
  const auto grouped = ta::analyze_grouped({first.log(), ddp_trial().log(), second.log()});
  ASSERT_EQ(grouped.size(), 2u);
  EXPECT_EQ(grouped[0].repeat_ids, (std::vector<std::string>{"single-1", "single-2"}));
  EXPECT_EQ(grouped[0].measured_steps, 8);
  EXPECT_DOUBLE_EQ(grouped[0].step_ms.median, 100.0);  // 5 x 100 and 3 x 110
}

// A switch that changes what a trial measures (TUNEBENCH_*, recorded in the hello's env by the
// worker) makes another configuration: trials that differ only in it are not pooled as repeats,
// and the comparison's configuration diff (the window's, the CLI's and the reports') names it.
TEST(Compare, EnvironmentSwitchesSeparateRepeatsAndShowInTheDiff) {
  const auto config = tunebench::config::from_json(single_gpu_trial().log().config()).config;
  auto second = SyntheticTrial("single-2", config);
  second.add_steps(0, 3, 110'000, {}, 4096);
  auto switched = second.log();
  for (auto& [rank, r] : switched.ranks) r.hello->env["TUNEBENCH_GEMM"] = "cublas";
  const auto grouped = ta::analyze_grouped({single_gpu_trial().log(), switched});
  ASSERT_EQ(grouped.size(), 2u) << "a trial with a switch set is no repeat of one without";
  EXPECT_TRUE(grouped[0].switches.empty());
  EXPECT_EQ(grouped[1].switches.at("TUNEBENCH_GEMM"), "cublas");
  const auto c = ta::compare(grouped, 0);
  const ta::KnobDiff* gemm = nullptr;
  for (const auto& d : c.config_diff)
    if (d.key == "TUNEBENCH_GEMM") gemm = &d;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->label, "switch TUNEBENCH_GEMM");
  EXPECT_EQ(gemm->values, (std::vector<std::string>{"unset", "cublas"}));
  // The same switch on every trial is no difference.
  auto first = single_gpu_trial().log();
  for (auto& [rank, r] : first.ranks) r.hello->env["TUNEBENCH_GEMM"] = "cublas";
  const auto same = ta::analyze_grouped({first, switched});
  ASSERT_EQ(same.size(), 1u);
  for (const auto& d : ta::compare({ta::analyze(first), ta::analyze(switched)}, 0).config_diff)
    EXPECT_NE(d.key, "TUNEBENCH_GEMM");
}
