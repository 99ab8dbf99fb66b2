// Text and JSON rendering of a report, the checked-in forum logs, and `tunebench-cli report`.
#include "core/analysis/report.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/analysis/format.h"
#include "core/protocol/trial_log.h"
#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
namespace tp = tunebench::protocol;
using namespace tunebench::testing;

namespace {

const std::string kDataDir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/analysis";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Runs a command and returns its stdout and exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {"", -1};
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST(Report, TextHasEverySection) {
  const auto report = ta::make_report(std::vector<tp::TrialLog>{ddp_trial().log(), single_gpu_trial().log()});
  EXPECT_EQ(report.comparison.baseline, 1u);  // the single-GPU trial, although listed second
  const std::string text = ta::render_text(report);
  EXPECT_TRUE(contains(text, "Tunebench report: 2 trials, baseline single")) << text;
  EXPECT_TRUE(contains(text, "Strategy (strategy)")) << text;
  EXPECT_TRUE(contains(text, "Step time (ms)")) << text;
  EXPECT_TRUE(contains(text, "Scaling efficiency (%)")) << text;
  EXPECT_TRUE(contains(text, "exposed communication")) << text;
  EXPECT_TRUE(contains(text, "ddp x2 step +43.0 ms over single (mean): exposed all-reduce +38.0 ms")) << text;
  EXPECT_TRUE(contains(text, "Communication floor 43.5 ms per step")) << text;
  EXPECT_TRUE(contains(text, "[communication-bound]")) << text;
  EXPECT_TRUE(contains(text, "try: grad_accum")) << text;
  EXPECT_TRUE(contains(text, "Diagnosis of single")) << text;
  // The breakdown table's step row: both trials' mean steps, in trial order.
  const auto row = text.find("\n  step ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  EXPECT_LT(line.find("143.0"), line.find("100.0")) << line;
  EXPECT_NE(line.find("100.0"), std::string::npos) << line;
}

TEST(Report, JsonCarriesTheNumbers) {
  const auto report = ta::make_report(std::vector<tp::TrialLog>{single_gpu_trial().log(), ddp_trial().log()});
  const auto j = ta::render_json(report);
  ASSERT_EQ(j.at("trials").size(), 2u);
  EXPECT_DOUBLE_EQ(j["trials"][1]["exposed_comm_ms"]["median"].get<double>(), 38.0);
  EXPECT_DOUBLE_EQ(j["trials"][1]["breakdown"]["exposed_comm_ms"].get<double>(), 38.0);
  EXPECT_TRUE(j["trials"][0]["hidden_fraction"].is_null());  // unknown is null, never 0
  EXPECT_NEAR(j["scaling_efficiency"][1].get<double>(), 100.0 / 143.0, 1e-12);
  EXPECT_EQ(j["pairs"][0]["findings"][0]["kind"], "communication-bound");
  EXPECT_TRUE(j["pairs"][0]["findings"][0]["suggestions"][0]["changes"].is_object());
  EXPECT_EQ(j["diagnoses"][0]["findings"][0]["kind"], "compute-bound");
  bool step_row = false;
  for (const auto& m : j["metrics"])
    if (m["key"] == "step_ms") {
      step_row = true;
      EXPECT_NEAR(m["ratio"][1].get<double>(), 1.43, 1e-12);
    }
  EXPECT_TRUE(step_row);
}

TEST(Report, CheckedInForumLogsGiveTheForumNumbers) {
  // tests/data/analysis/forum_*.jsonl are the forum scenario written by the protocol writer;
  // TUNEBENCH_REGENERATE_TEST_DATA=1 rewrites them from scenarios.cpp.
  if (std::getenv("TUNEBENCH_REGENERATE_TEST_DATA")) {
    std::filesystem::create_directories(kDataDir);
    write_file(kDataDir + "/forum_single.jsonl", forum_single_trial().jsonl());
    write_file(kDataDir + "/forum_ddp.jsonl", forum_ddp_trial().jsonl());
  }
  const auto single = ta::analyze(tp::read_trial_log_file(kDataDir + "/forum_single.jsonl"));
  const auto ddp = ta::analyze(tp::read_trial_log_file(kDataDir + "/forum_ddp.jsonl"));
  EXPECT_DOUBLE_EQ(single.step_ms.median, 1200.0);
  EXPECT_DOUBLE_EQ(ddp.step_ms.median, 1500.0);
  EXPECT_NEAR(*ta::scaling_efficiency(ddp, single), 0.8, 1e-12);
  EXPECT_NEAR(ddp.tokens_per_s_total.median / single.tokens_per_s_total.median, 1.6, 1e-12);
  EXPECT_DOUBLE_EQ(ddp.exposed_comm_ms.median, 200.0);
  EXPECT_DOUBLE_EQ(ddp.data_wait_ms.median, 100.0);
}

#ifdef TUNEBENCH_CLI
TEST(ReportCli, TextAndJsonOnEventLogs) {
  const std::string cli = TUNEBENCH_CLI;
  const std::string args = " report " + kDataDir + "/forum_single.jsonl " + kDataDir + "/forum_ddp.jsonl";
  auto [text, rc] = run(cli + args);
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(contains(text, "total throughput is 1.60x (5,461 vs 3,413 tokens/s)")) << text;
  EXPECT_TRUE(contains(text, "4090 ddp x2 step +300 ms over 4090 single (mean): exposed all-reduce +200 ms")) << text;

  auto [json_text, rc_json] = run(cli + args + " --json");
  EXPECT_EQ(rc_json, 0);
  const auto j = nlohmann::json::parse(json_text);
  EXPECT_EQ(j["pairs"][0]["feasibility"]["can_beat_single"], true);

  // One file holding both trials is split by trial id: the same report.
  const std::string both = std::string(TUNEBENCH_BINARY_DIR) + "/analysis_forum_both.jsonl";
  write_file(both, forum_single_trial().jsonl() + forum_ddp_trial().jsonl());
  auto [combined, rc_combined] = run(cli + " report " + both);
  EXPECT_EQ(rc_combined, 0);
  EXPECT_EQ(combined, text);

  auto [missing, rc_missing] = run(cli + " report " + kDataDir + "/no-such-file.jsonl 2>/dev/null");
  EXPECT_NE(rc_missing, 0);
}
#endif

TEST(Report, FailedTrialAndThreeWayComparison) {
  tunebench::config::TrialConfig c;
  c.name = "too big";
  c.device = tunebench::config::Device::Cuda;
  SyntheticTrial oom("oom", c);
  oom.add_error(0, "oom", "CUDA out of memory");
  const auto alone = ta::render_text(ta::make_report(std::vector<tp::TrialLog>{oom.log()}));
  EXPECT_TRUE(contains(alone, "1. [memory-bound] out of memory: the trial failed")) << alone;
  EXPECT_TRUE(contains(alone, "try: checkpointing true")) << alone;

  const auto report =
      ta::make_report(std::vector<tp::TrialLog>{single_gpu_trial().log(), ddp_trial().log(), oom.log()});
  ASSERT_EQ(report.pairs.size(), 2u);
  EXPECT_EQ(report.pairs[1].other_label, "too big");
  const std::string text = ta::render_text(report);
  EXPECT_TRUE(contains(text, "Why too big differs from single")) << text;
  const auto j = ta::render_json(report);
  EXPECT_TRUE(j["scaling_efficiency"][2].is_null());  // no throughput, no efficiency
}

// One figure per question on a recorded pair (tests/data/gpu: 7B on one H200, then two H200s with
// NCCL_P2P_DISABLE=1): the bus bandwidth the metrics table shows is the number the diagnosis
// writes, and each step figure names its statistic: the table and the throughput statement give
// medians, the pair's headline the mean (its parts add up), labelled so.
TEST(Report, ARecordedPairShowsOneFigurePerQuestion) {
  auto load = [](const char* name) {
    return tp::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) + "/gpu/" + name);
  };
  const auto report = ta::make_report(
      std::vector<tp::TrialLog>{load("h200-7b-single.jsonl"), load("h200x2-7b-ddp-ckpt-no-p2p.jsonl")}, 0u,
      {"one", "two"});
  const auto& ddp = report.comparison.trials[1];
  ASSERT_TRUE(ddp.busbw_gbps);
  const ta::MetricRow* bw = nullptr;
  for (const auto& r : report.comparison.metrics)
    if (r.key == "busbw_gbps") bw = &r;
  ASSERT_TRUE(bw && bw->values[1]);
  const std::string table = ta::format_metric_value(bw->values[1]->median, "GB/s") + " GB/s";
  EXPECT_EQ(table, ta::format_gbps(*ddp.busbw_gbps));
  ASSERT_EQ(report.pairs.size(), 1u);
  const auto& pair = report.pairs[0];
  EXPECT_NE(pair.headline.find(table), std::string::npos) << table << " | " << pair.headline;
  bool in_finding = false;
  for (const auto& f : pair.findings) in_finding = in_finding || f.title.find(table) != std::string::npos;
  EXPECT_TRUE(in_finding) << table;
  const std::string text = ta::render_text(report);
  EXPECT_NE(text.find(ta::format_metric_value(bw->values[1]->median, "GB/s")), std::string::npos);
  // The step: medians in the statement (the table's), the mean in the headline, each labelled.
  const auto& one = report.comparison.trials[0];
  EXPECT_NE(pair.throughput.find(ta::format_ms(ddp.step_ms.median) + " vs " + ta::format_ms(one.step_ms.median) +
                                 " median"),
            std::string::npos)
      << pair.throughput;
  EXPECT_NE(pair.headline.find(ta::format_signed_ms(ddp.breakdown.step_ms - one.breakdown.step_ms)), std::string::npos);
  EXPECT_NE(pair.headline.find("(mean)"), std::string::npos) << pair.headline;
}
