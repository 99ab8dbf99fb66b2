// tunebench-worker as a user runs it: help, bad configurations, unsupported requests, and the
// event log of a real (small) CPU run read back with the protocol reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>

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

using tunebench::testing::with;

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

namespace {

// The run's single error event (kind, message) and its done exit code.
struct Outcome {
  int exit_code = -1;
  std::string kind, message;
  bool done = false;
};
Outcome outcome_of(const tt::RankRun& run) {
  Outcome o;
  o.exit_code = run.exit_code;
  const auto log = tt::events_of(run);
  if (!log.ranks.count(0)) return o;
  const auto& r = log.ranks.at(0);
  if (!r.errors.empty()) {
    o.kind = r.errors.back().value.kind;
    o.message = r.errors.back().value.message;
  }
  o.done = r.done && r.done->exit_code == run.exit_code;
  return o;
}

}  // namespace

TEST(WorkerCli, KernelSamplePeriodZeroTurnsSamplingOffWithoutNamingTheSteps) {
  // --kernel-sample-steps keeps its default (2): a period of 0 alone means "off", not a config error.
  auto run = run_one(with(tt::small_model_args(), {"--steps", "3", "--warmup", "1", "--kernel-sample-every", "0"}),
                     "sampleoff");
  ASSERT_EQ(run.exit_code, 0) << tt::stderr_of(run);
  const auto log = tt::events_of(run);
  const auto& r = log.ranks.at(0);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.hello->config.at("kernel_sample_every"), 0);
  ASSERT_EQ(r.steps.size(), 3u);
  for (const auto& s : r.steps) EXPECT_FALSE(s.gpu_sampled);
  for (const auto& w : r.warnings) {
    EXPECT_NE(w.value.kind, "memory-categories") << "nothing is sampled: nothing to say";
    EXPECT_NE(w.value.kind, "memory-timeline") << "nothing is sampled: nothing to say";
  }
}

// The CPU has no caching allocator: a run whose steps are sampled says once that the memory
// categories are unknown, and once that the memory timeline is, and no step carries categories or
// a timeline (never a row of zeros).
TEST(WorkerCli, ACpuRunSaysMemoryCategoriesAreUnknownNotZero) {
  auto run = run_one(with(tt::small_model_args(), {"--steps", "4", "--warmup", "1", "--kernel-sample-every", "2",
                                                   "--kernel-sample-steps", "1"}),
                     "cpumemory");
  ASSERT_EQ(run.exit_code, 0) << tt::stderr_of(run);
  const auto log = tt::events_of(run);
  const auto& r = log.ranks.at(0);
  // Each kind said once, its message beginning with `words`.
  auto said_once = [&r](const std::string& kind, const std::string& words) {
    int said = 0;
    for (const auto& w : r.warnings)
      if (w.value.kind == kind) {
        ++said;
        EXPECT_EQ(w.value.message.rfind(words, 0), 0u) << w.value.message;
      }
    EXPECT_EQ(said, 1) << kind;
  };
  said_once("memory-categories", "memory categories unknown on CPU");
  said_once("memory-timeline", "memory timeline unknown on CPU");
  ASSERT_EQ(r.steps.size(), 4u);
  for (const auto& s : r.steps) {
    EXPECT_FALSE(s.memory_sampled) << "step " << s.step;
    EXPECT_EQ(s.memory_categories, tunebench::protocol::MemoryCategories{});
    EXPECT_TRUE(s.memory_timeline.empty()) << "step " << s.step;
  }
  // On the wire too: no step line holds a memory_categories group or a memory_timeline.
  std::ifstream in(run.events_path);
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_EQ(line.find("memory_categories"), std::string::npos) << line;
    EXPECT_EQ(line.find("memory_timeline"), std::string::npos) << line;
  }
}

TEST(WorkerCli, ConfigThatIsADirectoryIsAConfigErrorNotAnAbort) {
  // libstdc++ used to throw __ios_failure out of the JSON parser: SIGABRT, no event.
  const auto o = outcome_of(run_one({"--config", ::testing::TempDir()}, "configdir"));
  EXPECT_EQ(o.exit_code, tunebench::protocol::kExitConfig);
  EXPECT_EQ(o.kind, "config");
  EXPECT_NE(o.message.find("not a regular file"), std::string::npos) << o.message;
  EXPECT_TRUE(o.done);
}

TEST(WorkerCli, IntegerFlagsThatWouldWrapAreConfigErrors) {
  // 4294967297 = 2^32 + 1 used to become num_workers 1; 2^32 + 2 world size 2.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--num-workers", "4294967297"},
                                                                {"--world-size", "4294967298", "--strategy", "ddp"},
                                                                {"--heads", "18446744073709551616"}}) {
    const auto o = outcome_of(run_one(with(tt::small_model_args(), args), "wrap"));
    EXPECT_EQ(o.exit_code, tunebench::protocol::kExitConfig) << args[0];
    EXPECT_EQ(o.kind, "config") << args[0];
  }
}

TEST(WorkerCli, InfiniteOrHugeTimeoutsAreConfigErrors) {
  // inf and 1e30 used to end the run after 7 ms ("no progress for 0 s") or overflow a duration.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--collective-timeout-s", "inf"},
                                                                {"--collective-timeout-s", "1e30"},
                                                                {"--rendezvous-timeout-s", "inf"},
                                                                {"--rendezvous-timeout-s", "1e30"},
                                                                {"--collective-timeout-s", "nan"}}) {
    const auto o = outcome_of(run_one(with(tt::small_model_args(), args), "timeouts"));
    EXPECT_EQ(o.exit_code, tunebench::protocol::kExitConfig) << args[0] << " " << args[1];
    EXPECT_EQ(o.kind, "config") << args[0] << " " << args[1] << ": " << o.message;
  }
}

TEST(WorkerCli, HostOutOfMemoryIsAnOomNotACrash) {
  // 100,000,000 sequences of 1024 tokens: the first batch alone is 764 GiB of token ids, far more
  // than any machine lends (Linux refuses it at once, so the test never touches real memory).
  const auto o =
      outcome_of(run_one(with(tt::small_model_args(), {"--micro-batch", "100000000", "--seq-len", "1024"}), "cpuoom"));
  EXPECT_EQ(o.exit_code, tunebench::protocol::kExitOutOfMemory) << o.message;
  EXPECT_EQ(o.kind, "oom");
  EXPECT_EQ(o.message.rfind("out of host memory", 0), 0u) << o.message;
  EXPECT_TRUE(o.done);
}

TEST(WorkerCli, TokenBeyondTheVocabularyIsTheSameConfigErrorWithLoaderThreads) {
  // Token ids up to 6 * 7 = 42 against a vocabulary of 16.
  const std::string path = ::testing::TempDir() + "/big-tokens.bin";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 4096; ++i) {
      const uint16_t v = static_cast<uint16_t>((i % 7) * 7);
      out.write(reinterpret_cast<const char*>(&v), 2);
    }
  }
  std::vector<Outcome> outcomes;
  for (const char* workers : {"0", "2"}) {
    outcomes.push_back(outcome_of(run_one(with(tt::small_model_args(), {"--vocab", "16", "--data", "file",
                                                                        "--data-path", path, "--num-workers", workers}),
                                          std::string("vocab-nw") + workers)));
    EXPECT_EQ(outcomes.back().exit_code, tunebench::protocol::kExitConfig) << "num_workers " << workers;
    EXPECT_EQ(outcomes.back().kind, "config") << outcomes.back().message;
  }
  EXPECT_EQ(outcomes[0].message, outcomes[1].message);
  EXPECT_EQ(outcomes[1].message.find("DataLoader"), std::string::npos) << outcomes[1].message;
}

TEST(WorkerCli, HfConfigSetsTheModelAndNamesWhatItCannotModel) {
  // A small Mistral-like config with a sliding window: the worker trains its shape (grouped-query
  // attention, tied embeddings) and says, as a warning event, which field it left out.
  const std::string path = ::testing::TempDir() + "/hf-small.json";
  std::ofstream(path) << R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 176,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 96,
      "tie_word_embeddings": true, "rope_theta": 1000000.0, "sliding_window": 4096})";
  auto run = run_one({"--hf-config", path, "--device", "cpu", "--seq-len", "16", "--micro-batch", "2", "--steps", "2",
                      "--warmup", "1"},
                     "hfconfig");
  EXPECT_EQ(run.exit_code, 0);
  const auto log = tt::events_of(run);
  ASSERT_EQ(log.ranks.count(0), 1u);
  const auto& r = log.ranks.at(0);
  ASSERT_TRUE(r.hello.has_value());
  const auto& cfg = r.hello->config;
  EXPECT_EQ(cfg.at("model"), "custom");
  EXPECT_EQ(cfg.at("kv_heads"), 2);
  EXPECT_EQ(cfg.at("tie_embeddings"), true);
  EXPECT_EQ(cfg.at("rope_theta"), 1000000.0);
  bool warned = false;
  for (const auto& w : r.warnings)
    warned =
        warned || (w.value.kind == "hf_config" && w.value.message.find("sliding_window 4096") != std::string::npos);
  EXPECT_TRUE(warned);
  EXPECT_EQ(r.steps.size(), 2u);

  // A config.json that lacks fields is a config error naming them, before any work.
  const std::string bad = ::testing::TempDir() + "/hf-missing.json";
  std::ofstream(bad) << R"({"hidden_size": 64, "num_attention_heads": 4})";
  const auto o = outcome_of(run_one({"--hf-config", bad}, "hfmissing"));
  EXPECT_EQ(o.exit_code, tunebench::protocol::kExitConfig);
  EXPECT_NE(o.message.find("missing intermediate_size, num_hidden_layers, vocab_size"), std::string::npos) << o.message;
}

// A switch that changes what a trial measures is part of the trial (core/engine/switches.h): the
// hello records every TUNEBENCH_* switch set, beside the NCCL variables, and the switch acts
// (TUNEBENCH_MEMORY_PHASES: a log line per step). The launcher's own variables are not switches and
// are not recorded (the event token is a secret).
TEST(WorkerCli, SwitchesSetAreRecordedInTheTrialsEnvironment) {
  auto runs = tt::start_ranks(1, with(tt::small_model_args(), {"--steps", "2", "--warmup", "1"}), "switches",
                              {{"TUNEBENCH_MEMORY_PHASES", "1"},
                               {"TUNEBENCH_GEMM", "cublas"},
                               {"NCCL_DEBUG", "WARN"},
                               {"TUNEBENCH_TRIAL", "switches"},
                               {"TUNEBENCH_EVENT_TOKEN", "secret"}});
  ASSERT_GE(tt::wait_rank(runs[0], 240), 0) << "worker did not finish";
  ASSERT_EQ(runs[0].exit_code, 0) << tt::stderr_of(runs[0]);
  const auto log = tt::events_of(runs[0]);
  const auto& r = log.ranks.at(0);
  ASSERT_TRUE(r.hello);
  const auto& env = r.hello->env;
  ASSERT_TRUE(env.count("TUNEBENCH_MEMORY_PHASES")) << "a switch that was set is not in the trial's environment";
  EXPECT_EQ(env.at("TUNEBENCH_MEMORY_PHASES"), "1");
  ASSERT_TRUE(env.count("TUNEBENCH_GEMM"));
  EXPECT_EQ(env.at("TUNEBENCH_GEMM"), "cublas");
  EXPECT_EQ(env.at("NCCL_DEBUG"), "WARN");
  EXPECT_FALSE(env.count("TUNEBENCH_TRIAL"));
  EXPECT_FALSE(env.count("TUNEBENCH_EVENT_TOKEN"));
  // Each step's line names its forward, backward and optimizer peaks (lab/models_check_table.py
  // reads them), and resetting the peak at the boundaries leaves every step's peak_bytes the run's:
  // at least every phase peak logged so far.
  const std::regex line(R"(memory phases, step (\d+): forward peak (\d+) then (\d+); backward peak (\d+) then (\d+); optimizer peak (\d+) then (\d+);)");
  int phases = 0;
  int64_t logged_peak = 0;
  for (const auto& l : r.logs) {
    if (l.value.message.rfind("memory phases, step ", 0) != 0) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l.value.message, m, line)) << l.value.message;
    const int64_t step = std::stoll(m[1]);
    EXPECT_EQ(step, phases) << l.value.message;
    for (const int peak : {2, 4, 6}) logged_peak = std::max<int64_t>(logged_peak, std::stoll(m[peak]));
    ASSERT_LT(size_t(step), r.steps.size());
    EXPECT_GE(r.steps[size_t(step)].memory.peak_bytes, logged_peak) << "step " << step;
    ++phases;
  }
  EXPECT_EQ(phases, 2) << "TUNEBENCH_MEMORY_PHASES=1 logs each step's phase peaks";
}
