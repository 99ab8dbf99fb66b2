// A script's kernel-sampled steps (core/launch/kernel_traces.h) against a real torch.profiler trace
// of a GPU job (tests/data/traces/gpt-item: a small GPT calling loss.item() every step, H200): a
// step the probe measured, naming the trace, comes out with the trace's GPU busy, a compute lane of
// kernels and GPU-idle gaps with the synchronising op named, its host and comm lanes kept and its
// exposed communication recomputed; the probe's field is gone. What the trace says comes from the
// import (read_torch_trace) read here on its own, so the fold is checked, not the import. A trace
// that cannot be used (missing) leaves the steps unsampled with one warning per rank.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/import/torch_trace_reader.h"
#include "core/launch/kernel_traces.h"
#include "core/metrics/exposed_comm.h"

namespace tunebench::launch {
namespace {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

std::string gpt_item_trace() {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/traces/gpt-item";
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().string().find(".pt.trace.json.gz") != std::string::npos) return f.path().string();
  return {};
}

// What the probe sends for a sampled step: its own window and lanes, and the trace's path.
protocol::Event probe_step(const protocol::Step& window, const std::string& trace, int rank = 0) {
  protocol::Step s;
  s.step = window.step;
  s.start_us = window.start_us;
  s.end_us = window.end_us;
  s.step_ms = static_cast<double>(s.end_us - s.start_us) / 1000.0;
  const int64_t third = (s.end_us - s.start_us) / 3;
  s.intervals = {{Lane::Host, Phase::DataWait, s.start_us, s.start_us + third / 4, "", 0, 0.0},
                 {Lane::Compute, Phase::Forward, s.start_us + third, s.start_us + 2 * third, "", 0, 0.0},
                 {Lane::Compute, Phase::Backward, s.start_us + 2 * third, s.end_us, "", 0, 0.0},
                 {Lane::Comm, Phase::AllReduce, s.end_us - third / 2, s.end_us, "bucket 0", 1 << 20, 1.0}};
  s.kernel_trace = trace;
  protocol::Event e;
  e.header.rank = rank;
  e.payload = s;
  return e;
}

TEST(KernelTraces, AStepNamingItsTraceGetsTheTracesGpuFigures) {
  const std::string path = gpt_item_trace();
  ASSERT_FALSE(path.empty()) << "tests/data/traces/gpt-item holds no trace";
  const import::RankTrace imported = import::read_torch_trace(path);
  ASSERT_GE(imported.steps.size(), 2u);

  KernelTraces traces;
  size_t named_syncs = 0;
  for (const protocol::Step& window : imported.steps) {
    protocol::Event e = probe_step(window, path);
    EXPECT_FALSE(traces.apply(e).has_value()) << "step " << window.step;
    const auto& s = e.as<protocol::Step>();
    EXPECT_TRUE(s.kernel_trace.empty()) << "the probe's field is not stored";
    EXPECT_TRUE(s.gpu_sampled);
    // The same window: the trace's own GPU busy (its idle gaps cover exactly what no activity does).
    EXPECT_NEAR(s.gpu_busy_ms, window.gpu_busy_ms, 0.0015);
    EXPECT_GT(s.gpu_busy_ms, 0.0);

    std::vector<Interval> compute, want;
    int host = 0, comm = 0;
    for (const auto& in : s.intervals) {
      if (in.lane == Lane::Compute) compute.push_back(in);
      host += in.lane == Lane::Host;
      comm += in.lane == Lane::Comm;
      EXPECT_GE(in.start_us, s.start_us);
      EXPECT_LE(in.end_us, s.end_us);
    }
    for (const auto& in : window.intervals)
      if (in.lane == Lane::Compute) want.push_back(in);
    EXPECT_EQ(host, 1) << "the probe's host lane stays";
    EXPECT_EQ(comm, 1) << "the probe's comm lane stays";
    ASSERT_EQ(compute.size(), want.size()) << "the compute lane is the trace's";
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(compute[i].phase, want[i].phase);
      EXPECT_EQ(compute[i].start_us, want[i].start_us);
      EXPECT_EQ(compute[i].label, want[i].label);
    }
    for (size_t i = 1; i < compute.size(); ++i) EXPECT_LE(compute[i - 1].end_us, compute[i].start_us);
    // loss.item() every step: its synchronisation is a GPU-idle gap named by the op.
    named_syncs += std::any_of(compute.begin(), compute.end(), [](const Interval& in) {
      return in.phase == Phase::SyncWait && in.label == ".item() (aten::_local_scalar_dense)";
    });
    EXPECT_DOUBLE_EQ(s.exposed_comm_ms, static_cast<double>(metrics::exposed_comm_us(s.intervals)) / 1000.0);
  }
  // The last profiled step's .item() falls after its ProfilerStep span ends; every other has it.
  EXPECT_GE(named_syncs + 1, imported.steps.size());
}

// The probe's step and the trace's ProfilerStep need not coincide: GPU busy is the trace's busy
// fraction over the part both cover, given over the probe's step time, never the whole
// ProfilerStep's busy time over a shorter or longer probe step.
TEST(KernelTraces, GpuBusyIsReadOverThePartOfTheStepTheTraceCovers) {
  const std::string path = gpt_item_trace();
  ASSERT_FALSE(path.empty());
  const import::RankTrace imported = import::read_torch_trace(path);
  ASSERT_GE(imported.steps.size(), 1u);
  const protocol::Step& trace_step = imported.steps.front();
  const int64_t t0 = trace_step.start_us, t1 = trace_step.end_us, len = t1 - t0;
  ASSERT_GT(len, 1000);
  // The trace's own union of kernels over a part of its step, from its compute lane's activity runs
  // and the host lane's copies, computed here: the busy instants are those under any of them.
  auto busy_us = [&](int64_t from, int64_t to) {
    std::vector<std::pair<int64_t, int64_t>> runs;
    for (const auto& in : trace_step.intervals)
      if ((in.lane == Lane::Compute && !protocol::is_gpu_idle(in.phase)) ||
          (in.lane == Lane::Host && in.phase == Phase::HostToDevice))
        runs.emplace_back(std::max(in.start_us, from), std::min(in.end_us, to));
    std::sort(runs.begin(), runs.end());
    int64_t total = 0, end = from;
    for (const auto& [a, b] : runs) {
      if (b <= std::max(a, end)) continue;
      total += b - std::max(a, end);
      end = b;
    }
    return total;
  };
  ASSERT_NEAR(static_cast<double>(busy_us(t0, t1)) / 1000.0, trace_step.gpu_busy_ms, 0.0015)
      << "the lanes' runs are the trace's union of activity";

  // The probe's step ends at the trace step's middle (the ProfilerStep ran on after it): the busy
  // time is the first half's, not the whole step's busy time capped at the shorter step.
  const int64_t mid = t0 + len / 2;
  const double half_ms = static_cast<double>(mid - t0) / 1000.0;
  EXPECT_NEAR(busy_ms_in_window(trace_step, t0, mid, half_ms), static_cast<double>(busy_us(t0, mid)) / 1000.0,
              0.0015);
  // The probe's step begins a quarter before the trace's (the profiler opened late): the covered
  // part's busy fraction, over the probe's longer step.
  const int64_t early = t0 - len / 4;
  const double long_ms = static_cast<double>(t1 - early) / 1000.0;
  EXPECT_NEAR(busy_ms_in_window(trace_step, early, t1, long_ms) / long_ms,
              static_cast<double>(busy_us(t0, t1)) / static_cast<double>(len), 1e-6);
  // No overlap: nothing is known of the step's GPU.
  EXPECT_EQ(busy_ms_in_window(trace_step, t1 + 10, t1 + 2000, 1.99), 0.0);
}

TEST(KernelTraces, ATraceInTheTrialsFolderIsRemovedOnceItsWindowIsOverOthersStay) {
  const std::string data = gpt_item_trace();
  ASSERT_FALSE(data.empty());
  const auto dir = std::filesystem::temp_directory_path() / ("kernel-traces-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string own = (dir / "rank0-steps2-4.pt.trace.json.gz").string();
  std::filesystem::copy_file(data, own, std::filesystem::copy_options::overwrite_existing);
  const import::RankTrace imported = import::read_torch_trace(own);
  {
    KernelTraces traces(dir.string());
    for (const protocol::Step& window : imported.steps) {
      protocol::Event e = probe_step(window, own);
      traces.apply(e);
      EXPECT_TRUE(e.as<protocol::Step>().gpu_sampled);
      EXPECT_TRUE(std::filesystem::exists(own)) << "read once, kept while its window lasts";
    }
    protocol::Step after = imported.steps.back();
    after.step += 1;
    protocol::Event next = probe_step(after, "");
    traces.apply(next);
    EXPECT_FALSE(std::filesystem::exists(own)) << "the window is over: its trace goes";
    // A trace outside the trial's folder (the recorded data here, a --trace-dir) stays.
    protocol::Event outside = probe_step(imported.steps.front(), data);
    traces.apply(outside);
  }
  EXPECT_TRUE(std::filesystem::exists(data));
  std::filesystem::remove_all(dir);
}

TEST(KernelTraces, ATraceThatCannotBeReadLeavesTheStepsUnsampledWithOneWarningPerRank) {
  const std::string path = "/nonexistent/rank0-steps3-4.pt.trace.json";
  protocol::Step window;
  window.start_us = 1000;
  window.end_us = 9000;
  KernelTraces traces;
  for (int rank : {0, 1}) {
    protocol::Event hello;
    hello.header.rank = rank;
    protocol::Hello h;
    h.device_kind = "cuda";
    hello.payload = h;
    EXPECT_FALSE(traces.apply(hello).has_value());
    for (int64_t step : {3, 4}) {
      window.step = step;
      protocol::Event e = probe_step(window, path, rank);
      const auto note = traces.apply(e);
      EXPECT_FALSE(e.as<protocol::Step>().gpu_sampled);
      EXPECT_TRUE(e.as<protocol::Step>().kernel_trace.empty());
      ASSERT_EQ(note.has_value(), step == 3) << "one warning per rank, rank " << rank << " step " << step;
      if (!note) continue;
      EXPECT_EQ(note->header.rank, rank);
      const auto& w = note->as<protocol::Warning>();
      EXPECT_EQ(w.kind, "kernel-sampling");
      EXPECT_NE(w.message.find("rank0-steps3-4.pt.trace.json"), std::string::npos) << w.message;
      EXPECT_NE(w.message.find("GPU busy is unavailable"), std::string::npos) << w.message;
    }
  }
}

}  // namespace
}  // namespace tunebench::launch
