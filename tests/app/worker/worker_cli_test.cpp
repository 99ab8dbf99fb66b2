// tunebench-worker as a user runs it: help, bad configurations, unsupported requests, and the
// event log of a real (small) CPU run read back with the protocol reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/protocol/exit_codes.h"
#include "worker_process.h"

namespace tt = tunebench::testing;
using tunebench::protocol::Error;

namespace {

tt::RankRun run_one(const std::vector<std::string>& args, const std::string& tag) {
  auto runs = tt::start_ranks(1, args, tag);
  EXPECT_GE(tt::wait_rank(runs[0], 240), 0) << "worker did not finish";
  return runs[0];
}

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST(WorkerCli, HelpExplainsCompileAndExitCodes) {
  const std::string out = ::testing::TempDir() + "/help.txt";
  const std::string cmd = std::string(TUNEBENCH_WORKER) + " --help > " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--micro-batch"), std::string::npos);
  EXPECT_NE(text.find("--num-workers"), std::string::npos);
  EXPECT_NE(text.find("no torch.compile"), std::string::npos);
  EXPECT_NE(text.find("Exit codes"), std::string::npos);
}

TEST(WorkerCli, InvalidConfigIsAnErrorEventBeforeAnyWork) {
  auto run = run_one({"--micro-batch", "0", "--strategy", "single", "--world-size", "3"}, "badcfg");
  EXPECT_EQ(run.exit_code, tunebench::protocol::kExitConfig);
  const auto log = tt::events_of(run);
  ASSERT_EQ(log.ranks.count(0), 1u);
  const auto& r = log.ranks.at(0);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].value.kind, "config");
  EXPECT_NE(r.errors[0].value.message.find("micro_batch"), std::string::npos);
  EXPECT_NE(r.errors[0].value.message.find("world_size"), std::string::npos);
  EXPECT_FALSE(r.hello.has_value()) << "no device work before validation";
  EXPECT_TRUE(r.steps.empty());
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.done->exit_code, tunebench::protocol::kExitConfig);
}

TEST(WorkerCli, UnknownFlagsAndBadValuesAreConfigErrors) {
  EXPECT_EQ(run_one({"--bucket-size", "25"}, "badflag").exit_code, tunebench::protocol::kExitConfig);
  EXPECT_EQ(run_one({"--amp", "fp4"}, "badamp").exit_code, tunebench::protocol::kExitConfig);
  auto missing = run_one({"--config", "/nonexistent/trial.json"}, "badfile");
  EXPECT_EQ(missing.exit_code, tunebench::protocol::kExitConfig);
}

TEST(WorkerCli, GpuRequestWithoutCudaSaysSo) {
  auto run = run_one(with(tt::small_model_args(), {"--device", "cuda"}), "nocuda");
  // A CUDA build on a GPU machine would run; this test is about the CPU build CI uses.
  if (run.exit_code == 0) GTEST_SKIP() << "this worker has CUDA";
  EXPECT_EQ(run.exit_code, tunebench::protocol::kExitUnsupported);
  const auto log = tt::events_of(run);
  ASSERT_FALSE(log.ranks.at(0).errors.empty());
  EXPECT_EQ(log.ranks.at(0).errors[0].value.kind, "unsupported");
  EXPECT_NE(log.ranks.at(0).errors[0].value.message.find("CUDA"), std::string::npos);
}

TEST(WorkerCli, EventChannelThatCannotOpenExitsSix) {
  const std::string cmd = std::string(TUNEBENCH_WORKER) + " --events unix:/nonexistent/sock 2>/dev/null";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), tunebench::protocol::kExitEventChannel);
}

TEST(WorkerCli, BadTokenFileIsAConfigError) {
  auto run = run_one(with(tt::small_model_args(), {"--data", "file", "--data-path", "/nonexistent/tokens.bin"}), "badtok");
  EXPECT_EQ(run.exit_code, tunebench::protocol::kExitConfig);
  const auto log = tt::events_of(run);
  ASSERT_FALSE(log.ranks.at(0).errors.empty());
  EXPECT_NE(log.ranks.at(0).errors[0].value.message.find("/nonexistent/tokens.bin"), std::string::npos);
}

TEST(WorkerCli, EventLogOfARunParsesCompletely) {
  const std::string cfg = ::testing::TempDir() + "/trial.json";
  std::ofstream(cfg) << R"({"steps": 99, "warmup": 1, "micro_batch": 2})";
  auto run = run_one(with(tt::small_model_args(), {"--config", cfg, "--steps", "4"}), "fullrun");
  ASSERT_EQ(run.exit_code, 0) << tt::stderr_of(run);
  const auto log = tt::events_of(run);
  EXPECT_TRUE(log.problems.empty()) << "every line must be a valid event";
  EXPECT_EQ(log.trial, "fullrun");
  const auto& r = log.ranks.at(0);
  ASSERT_TRUE(r.hello);
  EXPECT_EQ(r.hello->device_kind, "cpu");
  EXPECT_FALSE(r.hello->torch.empty());
  EXPECT_EQ(r.hello->config.at("steps"), 4) << "flags override the config file";
  EXPECT_EQ(r.hello->config.at("micro_batch"), 2);
  ASSERT_TRUE(r.model);
  EXPECT_GT(r.model->parameters, 0);
  EXPECT_GT(r.model->flops_per_token, 0);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_TRUE(r.steps[0].warmup);
  EXPECT_FALSE(r.steps[1].warmup);
  for (const auto& s : r.steps) {
    EXPECT_EQ(s.tokens, 2 * 32);
    EXPECT_GT(s.memory.peak_bytes, 0);
    EXPECT_FALSE(s.intervals.empty());
  }
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.done->exit_code, 0);
  EXPECT_EQ(r.done->summary.measured_steps, 3);
  for (const auto& sample : r.samples) EXPECT_TRUE(sample.value.rss_bytes.has_value());
  EXPECT_NE(tt::stderr_of(run).find("done"), std::string::npos) << "human logs go to stderr";
}
