// Several ranks' traces -> one trial: collectives on the comm lanes with the bytes the model's
// gradients have (meta.json), ranks checked against each other, the known settings.
#include <gtest/gtest.h>

#include <map>

#include "core/import/trace_error.h"
#include "core/import/trace_trial.h"
#include "tests/core/import/trace_test_support.h"
#include "tests/core/store/test_support.h"

namespace tunebench::import {
namespace {

using protocol::Lane;
using protocol::Phase;
using store::test::TempDir;
namespace t = test;

using test::message_of;

// Per step of one rank: collective -> summed bytes, and how many.
std::vector<std::map<Phase, std::pair<int64_t, int>>> collectives(const protocol::RankLog& r) {
  std::vector<std::map<Phase, std::pair<int64_t, int>>> out;
  for (const auto& s : r.steps) {
    auto& m = out.emplace_back();
    for (const auto& in : s.intervals)
      if (in.lane == Lane::Comm) {
        m[in.phase].first += in.bytes;
        m[in.phase].second += 1;
      }
  }
  return out;
}

TEST(TraceTrial, DdpTwoRanksAllReduceEveryGradientOncePerStep) {
  const TraceTrial trial = read_trace_trial(t::trace_files("ddp-nw4"));
  const auto meta = t::meta("ddp-nw4");
  const int64_t params = meta["parameters"].get<int64_t>();
  ASSERT_EQ(trial.log.ranks.size(), 2u);
  EXPECT_EQ(trial.world_size, 2);
  EXPECT_EQ(trial.log.world_size(), 2);
  EXPECT_EQ(trial.name.find(" (imported trace, 2 ranks)"), trial.name.size() - 26) << trial.name;
  EXPECT_EQ(trial.name.rfind("rank0.", 0), 0u) << trial.name;  // the lowest rank's file
  EXPECT_EQ(trial.steps, int64_t(trial.log.ranks.at(0).steps.size()));  // per rank, not over ranks
  EXPECT_TRUE(trial.warnings.empty());
  for (const auto& [rank, r] : trial.log.ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_TRUE(r.hello && r.done);
    EXPECT_EQ(r.hello->world_size, 2);
    EXPECT_EQ(r.hello->config["strategy"], "ddp");
    EXPECT_EQ(r.done->exit_code, 0);
    EXPECT_EQ(r.done->summary.measured_steps, 4);
    ASSERT_EQ(r.steps.size(), 4u);
    for (const auto& per_step : collectives(r)) {
      ASSERT_EQ(per_step.size(), 1u);
      const auto& [bytes, count] = per_step.at(Phase::AllReduce);
      // All-reduced elements = parameters: fp32 gradients, 4 bytes each (meta: gradient_bytes_fp32).
      EXPECT_EQ(bytes, meta["gradient_bytes_fp32"].get<int64_t>());
      EXPECT_EQ(bytes / 4, params);
      EXPECT_GE(count, 2);  // buckets
    }
    for (const auto& s : r.steps) {
      EXPECT_GT(s.comm_ms, 0.0);
      EXPECT_GT(s.busbw_gbps, 0.0);
      for (const auto& in : s.intervals)
        if (in.lane == Lane::Comm) {
          EXPECT_EQ(in.label, "allreduce");
          EXPECT_GT(in.busbw_gbps, 0.0);
        }
    }
  }
}

TEST(TraceTrial, Fsdp2GathersParametersAndReduceScattersGradients) {
  const TraceTrial trial = read_trace_trial(t::trace_files("fsdp2-nw4"));
  const int64_t params = t::meta("fsdp2-nw4")["parameters"].get<int64_t>();
  ASSERT_EQ(trial.log.ranks.size(), 2u);
  for (const auto& [rank, r] : trial.log.ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    for (const auto& per_step : collectives(r)) {
      ASSERT_TRUE(per_step.count(Phase::AllGather));
      ASSERT_TRUE(per_step.count(Phase::ReduceScatter));
      // Reduce-scatter "size" is the full (unsharded) fp32 gradient buffer: every parameter once.
      EXPECT_EQ(per_step.at(Phase::ReduceScatter).first, 4 * params);
      EXPECT_EQ(per_step.at(Phase::ReduceScatter).second, 7);  // 6 blocks + the root
      // Parameters are gathered in forward and again in backward (FULL_SHARD), except the root's.
      EXPECT_GT(per_step.at(Phase::AllGather).first, 4 * params);
      EXPECT_LT(per_step.at(Phase::AllGather).first, 8 * params);
    }
    bool unit_label = false;
    for (const auto& in : r.steps[1].intervals)
      unit_label = unit_label || in.label.find("FSDP::all_gather (blocks.") != std::string::npos;
    EXPECT_TRUE(unit_label);
  }
}

TEST(TraceTrial, OneRankOfTwoIsImportedWithAWarning) {
  const TraceTrial trial = read_trace_trial({t::trace_files("ddp-nw4")[1]});
  ASSERT_EQ(trial.log.ranks.size(), 1u);
  EXPECT_EQ(trial.log.ranks.begin()->first, 1);
  ASSERT_EQ(trial.warnings.size(), 1u);
  EXPECT_EQ(trial.warnings[0], "only 1 of 2 ranks were imported (missing: 0)");
}

TEST(TraceTrial, MismatchedRanksAreRefusedWithTheReason) {
  TempDir dir;
  const auto ddp = t::trace_files("ddp-nw4");
  auto edited = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    t::rewrite_trace(ddp[1], dir.file(name), [&](nlohmann::json& j) {
      j["trace_id"] = "EDITED";
      edit(j);
    });
    return dir.file(name);
  };
  std::string why = message_of([&] { read_trace_trial({ddp[0], ddp[0]}); });
  EXPECT_NE(why.find("are the same trace (trace id"), std::string::npos) << why;

  const std::string world4 = edited("world4.json", [](nlohmann::json& j) { j["distributedInfo"]["world_size"] = 4; });
  why = message_of([&] { read_trace_trial({ddp[0], world4}); });
  EXPECT_NE(why.find("are not from one run: world size 2 vs 4"), std::string::npos) << why;

  const std::string rank0 = edited("rank0-again.json", [](nlohmann::json& j) { j["distributedInfo"]["rank"] = 0; });
  why = message_of([&] { read_trace_trial({ddp[0], rank0}); });
  EXPECT_NE(why.find("are both rank 0."), std::string::npos) << why;

  const std::string rank2 = edited("rank2.json", [](nlohmann::json& j) { j["distributedInfo"]["rank"] = 2; });
  why = message_of([&] { read_trace_trial({ddp[0], rank2}); });
  EXPECT_NE(why.find("rank2.json is rank 2 of a world of 2"), std::string::npos) << why;

  const std::string later = edited("later.json", [](nlohmann::json& j) {
    for (auto& e : j["traceEvents"]) {
      const std::string n = e.value("name", "");
      if (n.rfind("ProfilerStep#", 0) == 0) e["name"] = "ProfilerStep#" + std::to_string(std::stoi(n.substr(13)) + 5);
    }
  });
  why = message_of([&] { read_trace_trial({ddp[0], later}); });
  EXPECT_NE(why.find("are not the same profiling window: rank 0 has ProfilerStep#2–#5, rank 1 has ProfilerStep#7–#10"),
            std::string::npos)
      << why;

  const std::string hour_later = edited("hour.json", [](nlohmann::json& j) {
    for (auto& e : j["traceEvents"])
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + 3600e6;
  });
  why = message_of([&] { read_trace_trial({ddp[0], hour_later}); });
  EXPECT_NE(why.find("were recorded 3600 s apart and do not overlap in time"), std::string::npos) << why;

  why = message_of([&] { read_trace_trial({t::trace_files("single-nw0")[0], t::trace_files("single-nw4")[0]}); });
  EXPECT_NE(why.find("are both rank 0: traces without distributedInfo are single-GPU runs"), std::string::npos) << why;

  why = message_of([&] { read_trace_trial({t::trace_files("single-nw0")[0], ddp[1]}); });
  EXPECT_NE(why.find("world size 1 vs 2"), std::string::npos) << why;
}

TEST(TraceTrial, KnownSettingsFromTheTraceAndTheUser) {
  TraceImportOptions options;
  options.settings = {"micro_batch=8", "seq_len = 512", "sample_cpu_us=4000"};
  const TraceTrial trial = read_trace_trial(t::trace_files("single-nw0"), options);
  EXPECT_EQ(trial.config["micro_batch"], 8);
  EXPECT_EQ(trial.config["seq_len"], 512);
  EXPECT_EQ(trial.config["num_workers"], 0);  // from the trace
  EXPECT_EQ(trial.config["name"], trial.name);
  EXPECT_FALSE(trial.config.contains("grad_accum"));
  EXPECT_EQ(trial.log.config(), trial.config);  // what the analysis reads

  // A typo, a bad value: refused before any file is read (the path does not even exist).
  options.settings = {"micro_bach=8", "seq_len=-3", "nonsense"};
  std::string why = message_of([&] { read_trace_trial({"/nonexistent/trace.json"}, options); });
  EXPECT_NE(why.find("a setting is key=value (e.g. micro_batch=8), got 'nonsense'"), std::string::npos) << why;
  options.settings = {"micro_bach=8", "seq_len=-3"};
  why = message_of([&] { read_trace_trial({"/nonexistent/trace.json"}, options); });
  EXPECT_NE(why.find("micro_bach=8: unknown knob 'micro_bach'"), std::string::npos) << why;
  EXPECT_NE(why.find("seq_len=-3: sequence length must be at least 2"), std::string::npos) << why;
  // Against what the trace shows: a 2-rank DDP trace is not "single".
  options.settings = {"strategy=single"};
  why = message_of([&] { read_trace_trial(t::trace_files("ddp-nw4"), options); });
  EXPECT_NE(why.find("strategy=single: world_size: strategy 'single' runs one rank"), std::string::npos) << why;
}

TEST(TraceTrial, DefaultNames) {
  // What it is, not the folder it lay in (issue 44: "traces" or "log" named the trial).
  EXPECT_EQ(default_trial_name("/runs/traces/rank0.123.pt.trace.json.gz", 8), "rank0.123 (imported trace, 8 ranks)");
  EXPECT_EQ(default_trial_name("rank0.123.pt.trace.json.gz", 2), "rank0.123 (imported trace, 2 ranks)");
  EXPECT_EQ(default_trial_name("./trace.json", 1), "trace (imported trace, 1 rank)");
}

}  // namespace
}  // namespace tunebench::import
