// Dependency waits and Gloo's host collectives in imported traces (issue 40): a small Chrome trace written here, shaped as
// Kineto writes one with its CUDA sync records (enable_cuda_sync_events): stream 7 waits on an
// event of stream 13 and its next kernel, queued long before, starts milliseconds after the GPU ran
// dry. Every expected figure is computed from the trace's own records, not from the importer.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/analysis/diagnosis.h"
#include "core/analysis/phase_breakdown.h"
#include "core/analysis/trial_metrics.h"
#include "core/import/torch_trace_reader.h"
#include "core/import/trace_trial.h"
#include "core/metrics/gpu_activity.h"
#include "core/protocol/trial_log.h"

namespace tunebench::import {
namespace {

using nlohmann::json;
using protocol::Phase;

json x(const std::string& cat, const std::string& name, double ts, double dur, json args = json::object()) {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}, {"args", args}};
}

// Two kernels on stream 7; between them the host queued a wait on stream 13's event. The second
// kernel was launched at 205 µs and ran `held_us` after the first ended.
json two_stream_trace(double held_us) {
  json ev = json::array();
  ev.push_back(x("user_annotation", "ProfilerStep#1", 0, 10'000));
  ev.push_back(x("cpu_op", "aten::mm", 10, 30));
  ev.push_back(x("cuda_runtime", "cudaLaunchKernel", 15, 5, {{"correlation", 1}}));
  ev.push_back(x("kernel", "k_first", 50, 1'000, {{"correlation", 1}, {"stream", 7}, {"device", 0}}));
  ev.push_back(x("cpu_op", "my::join_streams", 100, 20));
  ev.push_back(x("cuda_runtime", "cudaEventRecord", 101, 2, {{"correlation", 3}}));
  ev.push_back(x("cuda_runtime", "cudaStreamWaitEvent", 105, 2, {{"correlation", 2}}));
  json sync = x("cuda_sync", "Stream Wait Event", 1'050, 0,
                {{"correlation", 2},
                 {"stream", 7},
                 {"wait_on_stream", 13},
                 {"wait_on_cuda_event_record_corr_id", 3},
                 {"device", 0}});
  sync["tid"] = 7;
  ev.push_back(sync);
  ev.push_back(x("cpu_op", "aten::add", 200, 20));
  ev.push_back(x("cuda_runtime", "cudaLaunchKernel", 205, 5, {{"correlation", 4}}));
  ev.push_back(x("kernel", "k_held", 1'050 + held_us, 500, {{"correlation", 4}, {"stream", 7}, {"device", 0}}));
  for (auto& e : ev)
    if (e["cat"] == "kernel") e["tid"] = 7;
  return {{"schemaVersion", 1}, {"traceEvents", ev}};
}

// The GPU-idle gap before each kernel, from the raw records: its start minus the end of all device
// work before it.
double gap_before_us(const json& trace, const std::string& kernel) {
  double start = 0, before_end = -1;
  for (const auto& e : trace["traceEvents"])
    if (e["cat"] == "kernel" && e["name"] == kernel) start = e["ts"].get<double>();
  for (const auto& e : trace["traceEvents"])
    if (e["cat"] == "kernel" && e["ts"].get<double>() < start)
      before_end = std::max(before_end, e["ts"].get<double>() + e["dur"].get<double>());
  return start - before_end;
}

int64_t phase_us(const protocol::Step& s, Phase p) {
  int64_t t = 0;
  for (const auto& in : s.intervals)
    if (in.phase == p) t += in.duration_us();
  return t;
}

TEST(DependencyWait, AKernelHeldByAnotherStreamsEventIsADependencyWaitOfItsMeasuredLengthNamedAfterTheWait) {
  const json trace = two_stream_trace(4'000);
  const RankTrace r = read_torch_trace_bytes(trace.dump(), "two-streams.json");
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& step = r.steps.front();
  const double held = gap_before_us(trace, "k_held");
  EXPECT_GT(held, static_cast<double>(metrics::kLaunchLatencyUs));
  EXPECT_NEAR(static_cast<double>(phase_us(step, Phase::DependencyWait)), held, 0.05 * held);
  EXPECT_EQ(phase_us(step, Phase::LaunchGap), 0);
  std::string label;
  for (const auto& in : step.intervals)
    if (in.phase == Phase::DependencyWait) label = in.label;
  EXPECT_NE(label.find("cudaStreamWaitEvent: stream 7 waited for stream 13"), std::string::npos) << label;
  EXPECT_NE(label.find("my::join_streams"), std::string::npos) << label;

  // The breakdown and the diagnosis: a dependency, never launch latency, never a CUDA graph.
  protocol::TrialLog log;
  log.trial = "t";
  auto& rank = log.ranks[0];
  rank.hello = r.hello;
  rank.steps.push_back(step);
  const auto m = analysis::analyze(log);
  EXPECT_NEAR(m.breakdown[analysis::Part::DependencyWait] * 1000.0, held, 0.05 * held);
  EXPECT_EQ(m.breakdown[analysis::Part::LaunchGap], 0.0);
  const auto d = analysis::diagnose(m);
  bool dependency = false;
  for (const auto& f : d.findings) {
    dependency = dependency || f.kind == analysis::FindingKind::DependencyBound;
    for (const auto& s : f.suggestions) EXPECT_EQ(s.title.find("graph"), std::string::npos) << s.title;
    EXPECT_EQ(f.detail.find("a CUDA graph replays"), std::string::npos) << f.detail;
  }
  EXPECT_TRUE(dependency);
}

TEST(DependencyWait, AQueuedKernelThatStartsWithinTheLaunchLatencyIsALaunchGap) {
  const json trace = two_stream_trace(static_cast<double>(metrics::kLaunchLatencyUs) / 2);
  const RankTrace r = read_torch_trace_bytes(trace.dump(), "two-streams.json");
  ASSERT_EQ(r.steps.size(), 1u);
  const double gap = gap_before_us(trace, "k_held");
  EXPECT_NEAR(static_cast<double>(phase_us(r.steps.front(), Phase::LaunchGap)), gap, 1.0);
  EXPECT_EQ(phase_us(r.steps.front(), Phase::DependencyWait), 0);
}

}  // namespace
}  // namespace tunebench::import

// ---- a delayed rank through Gloo (issue 40) ----------------------------------------------------

namespace tunebench::import {
namespace {

// One rank of a two-rank Gloo run: 3 profiled steps of 100 ms; a kernel per step, then the
// gloo:all_reduce span from the rank's arrival to the collective's end (Gloo on the host).
json gloo_rank_trace(int rank, double arrival_ms) {
  json ev = json::array();
  for (int s = 0; s < 3; ++s) {
    const double t0 = 1'000.0 + s * 100'000.0;
    ev.push_back(x("user_annotation", "ProfilerStep#" + std::to_string(s + 2), t0, 100'000));
    ev.push_back(x("cpu_op", "aten::mm", t0 + 10, 30));
    ev.push_back(x("cuda_runtime", "cudaLaunchKernel", t0 + 15, 5, {{"correlation", 10 * s + 1}}));
    ev.push_back(x("kernel", "k", t0 + 50, 20'000, {{"correlation", 10 * s + 1}, {"stream", 7}, {"device", 0}}));
    json g = x("user_annotation", "gloo:all_reduce", t0 + arrival_ms * 1000, (90.0 - arrival_ms) * 1000);
    g["tid"] = 99;  // Gloo's own thread
    ev.push_back(g);
  }
  return {{"schemaVersion", 1},
          {"traceEvents", ev},
          {"baseTimeNanoseconds", 1'700'000'000'000'000'000},
          {"trace_id", "gloo" + std::to_string(rank)},
          {"distributedInfo", {{"backend", "gloo"}, {"rank", rank}, {"world_size", 2}}}};
}

TEST(GlooCollectives, AnImportedDelayedRankIsNamedLastAndTheOthersWaitItsDelay) {
  const std::string dir = testing::TempDir();
  const double arrival_ms[2] = {40.0, 70.0};  // rank 1 arrives 30 ms later at every all-reduce
  std::vector<std::string> paths;
  for (int r = 0; r < 2; ++r) {
    paths.push_back(dir + "/gloo_rank" + std::to_string(r) + ".json");
    std::ofstream(paths.back()) << gloo_rank_trace(r, arrival_ms[r]).dump();
  }
  const TraceTrial t = read_trace_trial(paths);
  const auto m = analysis::analyze(t.log);
  ASSERT_TRUE(m.collectives);
  EXPECT_EQ(m.collectives->last_rank, 1);
  EXPECT_EQ(m.collectives->collectives, 3);
  EXPECT_EQ(m.collectives->last_counts.at(1), 3);
  EXPECT_NEAR(m.collectives->others_wait_ms_per_step, arrival_ms[1] - arrival_ms[0], 1e-3);
  EXPECT_GT(m.comm_ms.median, 0.0);  // the spans are the comm lane
}

}  // namespace
}  // namespace tunebench::import
