// One number and one wording everywhere (issue 15, items 3 and 4; issue 16's suggestion check):
// the trial's step time is defined once; small bandwidths keep their digits; a pair suggests one
// grad_accum and its statement agrees; CPU ranks are not called GPUs; a measurement above the
// model's bound is explained by its spread; sentences use the names tables use; every suggested
// follow-up trial is valid.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/analysis/diagnosis.h"
#include "core/analysis/format.h"
#include "core/analysis/pair_diagnosis.h"
#include "core/analysis/report.h"
#include "core/analysis/step_time.h"
#include "core/analysis/throughput.h"
#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
namespace tc = tunebench::config;
namespace tp = tunebench::protocol;
using namespace tunebench::testing;
using tp::Phase;

namespace {

tc::TrialConfig config_of(const char* name, tc::Device device, tc::Strategy strategy, int world) {
  tc::TrialConfig c;
  c.name = name;
  c.device = device;
  c.strategy = strategy;
  c.world_size = world;
  c.micro_batch = 4;
  c.seq_len = 1024;
  c.steps = 7;
  c.warmup = 2;
  return c;
}

// Every text a pair diagnosis shows: headline, throughput statement, findings, suggestions.
std::string all_text(const ta::PairDiagnosis& p) {
  std::string s = p.headline + "\n" + p.throughput + "\n";
  if (p.feasibility) s += p.feasibility->statement + "\n";
  for (const auto& f : p.findings) {
    s += f.title + "\n" + f.detail + "\n";
    for (const auto& sug : f.suggestions) s += sug.title + ": " + sug.why + "\n";
  }
  return s;
}

std::set<std::string> grad_accum_values(const ta::PairDiagnosis& p) {
  std::set<std::string> values;
  for (const auto& f : p.findings)
    for (const auto& sug : f.suggestions)
      for (const auto& ch : sug.changes)
        if (ch.key == "grad_accum") values.insert(ch.value);
  return values;
}

}  // namespace

TEST(StepTime, TheTrialsStepTimeIsTheSlowestRanksStepEverywhere) {
  // Rank 0 computes for 100.0 ms; rank 1 computes 60 ms and waits in its all-reduce until 100.5 ms.
  // Rank 0 is the critical (busiest) rank; the step itself took 100.5 ms.
  SyntheticTrial t("two", config_of("two", tc::Device::Cuda, tc::Strategy::Ddp, 2));
  for (int64_t i = 0; i < 6; ++i) {
    t.add_step(0, i, 100'000, {iv(Phase::Forward, 0, 40'000), iv(Phase::Backward, 40'000, 100'000)}, 4096, i == 0);
    t.add_step(1, i, 100'500,
               {iv(Phase::Forward, 0, 20'000), iv(Phase::Backward, 20'000, 60'000),
                iv(Phase::AllReduce, 60'000, 100'500, 1'000'000, 10.0)},
               4096, i == 0);
  }
  const auto log = t.log();
  const auto defined = ta::trial_step_ms(log);
  EXPECT_DOUBLE_EQ(defined.median, 100.5);
  EXPECT_EQ(defined.n, 5);
  const auto metrics = ta::analyze(log);
  EXPECT_DOUBLE_EQ(metrics.step_ms.median, defined.median);  // the comparison's number
  EXPECT_DOUBLE_EQ(ta::make_report(std::vector<tp::TrialLog>{log}).comparison.trials[0].step_ms.median, defined.median);
  // A log holding only step windows (what the store's trial_steps() gives the trials table) agrees.
  tp::TrialLog windows = log;
  for (auto& [rank, r] : windows.ranks)
    for (auto& s : r.steps) s.intervals.clear();
  EXPECT_DOUBLE_EQ(ta::trial_step_ms(windows).median, defined.median);
  // The per-step curve (the comparison's Curves tab, the HTML report) has the same step times, the
  // warm-up step flagged and the ranks' mean loss.
  const auto curve = ta::step_curve(log);
  ASSERT_EQ(curve.size(), 6u);
  EXPECT_TRUE(curve[0].warmup);
  EXPECT_FALSE(curve[1].warmup);
  for (const auto& p : curve) {
    EXPECT_DOUBLE_EQ(p.ms, 100.5);
    if (!p.warmup) {
      EXPECT_DOUBLE_EQ(tunebench::metrics::step_times_ms(log).at(p.step), p.ms);
    }
  }
}

TEST(Wording, SmallBandwidthsKeepTheirSignificantDigits) {
  EXPECT_EQ(ta::format_gbps(0.412), "0.412 GB/s");  // was "0 GB/s"
  EXPECT_EQ(ta::format_gbps(27.63), "27.6 GB/s");
  EXPECT_EQ(ta::format_gbps(310.4), "310 GB/s");
  EXPECT_EQ(ta::format_gbps(1234.4), "1234 GB/s");
  EXPECT_EQ(ta::format_ms(0.043), "0.043 ms");  // was "0.0 ms"
  EXPECT_EQ(ta::format_ms(45.0), "45.0 ms");
  // In a finding: gradients over a 0.4 GB/s link.
  auto c = config_of("slow link", tc::Device::Cuda, tc::Strategy::Ddp, 2);
  SyntheticTrial t("slow", c);
  t.set_parameters(100'000'000);
  t.add_steps(1, 4, 1'100'000,
              {iv(Phase::Forward, 0, 50'000), iv(Phase::Backward, 50'000, 100'000),
               iv(Phase::AllReduce, 100'000, 1'100'000, 400'000'000, 0.4)},
              4096);
  const auto d = ta::diagnose(ta::analyze(t.log()));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_NE(d.findings.front().title.find("at 0.400 GB/s"), std::string::npos) << d.findings.front().title;
}

TEST(Wording, APairSuggestsOneGradAccumAndItsStatementAgrees) {
  for (const auto& [base, other] :
       {std::pair{single_gpu_trial(), ddp_trial()}, std::pair{forum_single_trial(), forum_ddp_trial()}}) {
    const auto b = ta::analyze(base.log());
    const auto o = ta::analyze(other.log());
    const auto p = ta::diagnose_pair(b, o);
    ASSERT_TRUE(p.feasibility);
    const auto values = grad_accum_values(p);
    EXPECT_LE(values.size(), 1u) << all_text(p);
    const std::string text = all_text(p);
    EXPECT_EQ(text.find("grad_accum x1 "), std::string::npos) << text;  // "x1 would keep 90 %" meant nothing
    if (p.feasibility->accum_for_90pct > 1) {
      ASSERT_EQ(values.size(), 1u) << text;
      // The statement's bound is met by the one suggestion.
      const int64_t suggested = std::stoll(*values.begin());
      EXPECT_GE(suggested, p.feasibility->accum_for_90pct) << text;
      EXPECT_NE(
          p.feasibility->statement.find("grad_accum " + std::to_string(p.feasibility->accum_for_90pct) + " or more"),
          std::string::npos)
          << p.feasibility->statement;
    } else {
      EXPECT_NE(p.feasibility->statement.find("no accumulation is needed"), std::string::npos)
          << p.feasibility->statement;
    }
  }
}

TEST(Wording, CpuRanksAreNotCalledGpus) {
  auto single_cfg = config_of("cpu single", tc::Device::Cpu, tc::Strategy::Single, 1);
  auto ddp_cfg = config_of("cpu ddp", tc::Device::Cpu, tc::Strategy::Ddp, 2);
  SyntheticTrial single("cpu-1", single_cfg, "cpu", 24'000'000'000);
  single.set_parameters(10'000'000);
  single.add_steps(1, 4, 100'000, {iv(Phase::Forward, 0, 30'000), iv(Phase::Backward, 30'000, 100'000)}, 4096);
  SyntheticTrial ddp("cpu-2", ddp_cfg, "cpu", 24'000'000'000);
  ddp.set_parameters(10'000'000);
  ddp.add_steps(1, 4, 160'000,
                {iv(Phase::DataWait, 0, 20'000), iv(Phase::Forward, 20'000, 50'000),
                 iv(Phase::Backward, 50'000, 120'000), iv(Phase::AllReduce, 120'000, 160'000, 40'000'000, 1.0)},
                4096);
  const auto report = ta::make_report(std::vector<tp::TrialLog>{single.log(), ddp.log()});
  const std::string text = ta::render_text(report);
  EXPECT_EQ(text.find("GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("CPU ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("Throughput per CPU rank"), std::string::npos) << text;
}

TEST(Wording, AMeasurementAboveTheBoundMentionsTheSpread) {
  // The single GPU's steps vary from 70 to 130 ms (median 100); two GPUs each do their 4,096 tokens
  // in 95 ms with a floor of 43.5 ms of which only 20 ms fits under backward. The model's best case
  // is 2 x 100 / (100 + 23.5) = 1.62x; measured 2 x 100 / 95 = 2.1x.
  auto single_cfg = config_of("single", tc::Device::Cuda, tc::Strategy::Single, 1);
  SyntheticTrial single("s", single_cfg);
  single.set_parameters(3'375'000'000);
  const int64_t times[] = {100'000, 70'000, 130'000, 85'000, 115'000, 100'000};
  for (int64_t i = 0; i < 6; ++i)
    single.add_step(0, i, times[i], {iv(Phase::Forward, 0, times[i] / 3), iv(Phase::Backward, times[i] / 3, times[i])},
                    4096, i == 0);
  SyntheticTrial ddp("d", config_of("ddp", tc::Device::Cuda, tc::Strategy::Ddp, 2));
  ddp.set_parameters(3'375'000'000);
  ddp.add_steps(1, 5, 95'000,
                {iv(Phase::Forward, 0, 75'000), iv(Phase::Backward, 75'000, 95'000),
                 iv(Phase::AllReduce, 10'000, 95'000, 13'500'000'000, 310.0)},
                4096);
  const auto p = ta::diagnose_pair(ta::analyze(single.log()), ta::analyze(ddp.log()));
  ASSERT_TRUE(p.feasibility);
  ASSERT_GT(p.feasibility->speedup_measured, p.feasibility->speedup_full_overlap);
  const std::string& s = p.feasibility->statement;
  EXPECT_NE(s.find("above the model's best case"), std::string::npos) << s;
  EXPECT_NE(s.find("varies by ±"), std::string::npos) << s;
  EXPECT_NE(s.find("between quartiles"), std::string::npos) << s;
}

TEST(Wording, SentencesUseTheDisplayNamesTablesUse) {
  const auto report = ta::make_report(std::vector<tp::TrialLog>{single_gpu_trial().log(), ddp_trial().log()},
                                      std::nullopt, {"Single H200", "DDP on 2 H200"});
  const std::string text = ta::render_text(report);
  EXPECT_NE(text.find("baseline Single H200"), std::string::npos) << text;
  EXPECT_NE(text.find("DDP on 2 H200 step +43.0 ms over Single H200"), std::string::npos) << text;
  ASSERT_EQ(report.pairs.size(), 1u);
  EXPECT_EQ(report.pairs[0].headline.rfind("DDP on 2 H200 step", 0), 0u) << report.pairs[0].headline;
  for (const auto& s : report.comparison.throughput_statements)
    EXPECT_EQ(s.rfind("DDP on 2 H200 vs Single H200", 0), 0u) << s;
  // No sentence falls back to the config name or the run id.
  EXPECT_EQ(text.find("ddp x2 step"), std::string::npos) << text;
  EXPECT_EQ(text.find("ddp-1"), std::string::npos) << text;
}

TEST(Suggestions, EverySuggestedTrialPassesValidation) {
  // A straggler whose loader cannot keep up, with num_workers already at 40: doubling gives 80,
  // past validate()'s cap of 64.
  auto c = config_of("straggler", tc::Device::Cuda, tc::Strategy::Ddp, 2);
  c.num_workers = 40;
  SyntheticTrial t("straggler", c);
  t.set_parameters(1'000'000'000);
  for (int64_t i = 0; i < 5; ++i) {
    t.add_step(0, i, 100'000,
               {iv(Phase::DataWait, 0, 30'000), iv(Phase::Forward, 30'000, 60'000), iv(Phase::Backward, 60'000, 95'000),
                iv(Phase::AllReduce, 95'000, 100'000, 4'000'000'000, 800.0)},
               4096, i == 0);
    t.add_step(1, i, 100'000,
               {iv(Phase::Forward, 0, 30'000), iv(Phase::Backward, 30'000, 65'000),
                iv(Phase::AllReduce, 65'000, 100'000, 4'000'000'000, 800.0)},
               4096, i == 0);
  }
  const auto m = ta::analyze(t.log());
  std::vector<ta::Finding> all = ta::diagnose(m).findings;
  const auto pair = ta::diagnose_pair(ta::analyze(single_gpu_trial().log()), m);
  all.insert(all.end(), pair.findings.begin(), pair.findings.end());
  int checked = 0;
  for (const auto& f : all)
    for (const auto& sug : f.suggestions) {
      std::vector<tc::Problem> problems;
      ta::apply(sug, c, &problems);
      EXPECT_TRUE(problems.empty()) << sug.title << ": " << tc::describe(problems);
      ++checked;
    }
  EXPECT_GT(checked, 0);

  // And the filter itself: a suggestion past a cap is dropped, a valid one kept.
  std::vector<ta::Finding> findings(1);
  findings[0].suggestions = {{"num_workers 80", {{"num_workers", "80"}}, ""},
                             {"num_workers 64", {{"num_workers", "64"}}, ""}};
  ta::keep_valid_suggestions(findings, c);
  ASSERT_EQ(findings[0].suggestions.size(), 1u);
  EXPECT_EQ(findings[0].suggestions[0].title, "num_workers 64");
}

TEST(MetricsEverywhere, EveryMetricOfATrialIsOneFigureInEveryCoreView) {
  // Tokens/s read 657 in the comparison and 666 in the table; communication read three
  // ways. Every metric the views show comes from one analysis function; here each core view is
  // checked against it: the per-metric functions, TrialMetrics, the report's JSON, the worker's
  // windows-only log (what the trials table loads), and the diagnosis's words.
  auto c = config_of("ddp", tc::Device::Cuda, tc::Strategy::Ddp, 2);
  SyntheticTrial t("ddp-1", c);
  t.set_parameters(1'000'000'000);
  const int64_t times0[] = {100'000, 120'000, 110'000, 150'000, 105'000, 130'000};
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t u = times0[i];
    // Two all-reduces that overlap each other and backward: the union, not the sum, is the comm.
    t.add_step(0, i, u,
               {iv(Phase::DataWait, 0, 5'000), iv(Phase::Forward, 5'000, u / 3), iv(Phase::Backward, u / 3, u - 20'000),
                iv(Phase::AllReduce, u / 2, u - 10'000, 400'000'000, 100.0),
                iv(Phase::AllReduce, u / 2 + 5'000, u - 5'000, 400'000'000, 100.0)},
               4096, i == 0);
    t.add_step(1, i, u - 2'000,
               {iv(Phase::Forward, 0, u / 3), iv(Phase::Backward, u / 3, u - 30'000),
                iv(Phase::AllReduce, u / 2, u - 2'000, 800'000'000, 100.0)},
               4096, i == 0);
  }
  const auto log = t.log();
  const auto m = ta::analyze(log);
  // The per-metric functions.
  EXPECT_DOUBLE_EQ(ta::trial_step_ms(log).median, m.step_ms.median);
  const auto rate = ta::trial_tokens_per_s(log);
  EXPECT_DOUBLE_EQ(rate.median, m.tokens_per_s_total.median);
  EXPECT_DOUBLE_EQ(rate.p25, m.tokens_per_s_total.p25);
  EXPECT_DOUBLE_EQ(rate.p75, m.tokens_per_s_total.p75);
  EXPECT_DOUBLE_EQ(ta::trial_tokens_per_step(log), m.tokens_per_step);
  EXPECT_DOUBLE_EQ(m.tokens_per_s_total.median, tunebench::metrics::tokens_per_second(8192, m.step_ms.median));
  EXPECT_DOUBLE_EQ(m.tokens_per_s_per_gpu.median, m.tokens_per_s_total.median / 2);
  // What the trials table loads (steps without intervals) gives the same step time and throughput.
  tp::TrialLog windows = log;
  for (auto& [rank, r] : windows.ranks)
    for (auto& s : r.steps) s.intervals.clear();
  EXPECT_DOUBLE_EQ(ta::trial_step_ms(windows).median, m.step_ms.median);
  EXPECT_DOUBLE_EQ(ta::trial_tokens_per_s(windows).median, m.tokens_per_s_total.median);
  // The report (CLI, "Copy report as text", scripts) carries TrialMetrics' figures, key by key.
  const auto json = ta::render_json(ta::make_report(std::vector<tp::TrialLog>{log}));
  std::map<std::string, double> expected = {{"step_ms", m.step_ms.median},
                                            {"tokens_per_s_total", m.tokens_per_s_total.median},
                                            {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu.median},
                                            {"comm_ms", m.comm_ms.median},
                                            {"exposed_comm_ms", m.exposed_comm_ms.median},
                                            {"data_wait_ms", m.data_wait_ms.median}};
  for (const auto& row : json["metrics"]) {
    const auto it = expected.find(row["key"].get<std::string>());
    if (it == expected.end()) continue;
    EXPECT_DOUBLE_EQ(row["values"][0]["median"].get<double>(), it->second) << it->first;
    expected.erase(it);
  }
  EXPECT_TRUE(expected.empty()) << "metrics missing from the report: " << expected.begin()->first;
  // Communication is the union of the collectives (the critical rank's): never more than the step.
  EXPECT_LE(m.comm_ms.max, m.step_ms.max);
  // The diagnosis's exposed communication is the breakdown's mean and says so.
  const auto d = ta::diagnose(m);
  for (const auto& f : d.findings)
    if (f.kind == ta::FindingKind::CommBound) {
      EXPECT_DOUBLE_EQ(f.impact_ms, m.breakdown[ta::Part::ExposedComm]);
      EXPECT_NE(f.title.find("(mean;"), std::string::npos) << f.title;
    }
}
