// One rank's torch.profiler trace -> steps and lanes, on the real traces of tests/data/traces/
// (our own small GPT job on H200s, lab/make_profiler_traces.py), and every kind of bad file.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/analysis/phase_breakdown.h"
#include "core/import/torch_trace_reader.h"
#include "core/import/trace_error.h"
#include "tests/core/import/trace_test_support.h"
#include "tests/core/store/test_support.h"

namespace tunebench::import {
namespace {

using protocol::Lane;
using protocol::Phase;
using store::test::TempDir;
namespace t = test;

const char* const kSingleRuns[] = {"single-nw0", "single-nw4", "single-ckpt"};
const char* const kAllRuns[] = {"single-nw0", "single-nw4", "single-ckpt", "ddp-nw4", "fsdp2-nw4"};

// Mean over steps of each phase's covered time on its lane (ms).
std::map<Phase, double> mean_phase_ms(const RankTrace& r) {
  std::map<Phase, double> ms;
  for (const auto& s : r.steps)
    for (const auto& in : s.intervals) ms[in.phase] += static_cast<double>(in.duration_us()) / 1000.0;
  for (auto& [p, v] : ms) v /= static_cast<double>(r.steps.size());
  return ms;
}

using test::message_of;

TEST(TorchTraceReader, StepsAreTheTracesOwnProfilerStepsAndTheirPartsAddUp) {
  for (const char* run : kAllRuns)
    for (const std::string& file : t::trace_files(run)) {
      SCOPED_TRACE(file);
      const RankTrace r = read_torch_trace(file);
      const std::vector<double> expected_us = t::profiler_step_durations_us(file);
      ASSERT_EQ(r.steps.size(), expected_us.size());
      ASSERT_EQ(r.steps.size(), t::meta(run)["profiled_steps"].get<size_t>());
      for (size_t i = 0; i < r.steps.size(); ++i) {
        const auto b = analysis::breakdown_of(r.steps[i]);
        int64_t parts = 0;
        for (auto p : analysis::kAllParts) parts += b[p];
        EXPECT_NEAR(static_cast<double>(parts), expected_us[i], 0.02 * expected_us[i]) << "step " << i;
        EXPECT_NEAR(r.steps[i].step_ms * 1000.0, expected_us[i], 0.02 * expected_us[i]) << "step " << i;
        // Most of a step is explained by something, not idle (the jobs synchronise every step).
        EXPECT_LT(b[analysis::Part::Idle], parts / 2) << "step " << i;
      }
      EXPECT_EQ(r.first_step_number, 2);  // schedule(wait=1, warmup=1, active=4)
      EXPECT_EQ(r.last_step_number, 5);
      EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    }
}

TEST(TorchTraceReader, LanesStayInsideTheirStepAndComputeAndHostNeverOverlap) {
  for (const char* run : kAllRuns)
    for (const std::string& file : t::trace_files(run)) {
      SCOPED_TRACE(file);
      const RankTrace r = read_torch_trace(file);
      int64_t prev_end = 0;
      for (const auto& s : r.steps) {
        EXPECT_GE(s.start_us, prev_end);
        prev_end = s.end_us;
        std::map<Lane, std::vector<const protocol::Interval*>> lanes;
        for (const auto& in : s.intervals) {
          EXPECT_GE(in.start_us, s.start_us);
          EXPECT_LE(in.end_us, s.end_us);
          EXPECT_LT(in.start_us, in.end_us);
          EXPECT_EQ(in.lane, protocol::default_lane(in.phase == Phase::Other && in.lane == Lane::Comm ? Phase::AllReduce
                                                                                                      : in.phase));
          lanes[in.lane].push_back(&in);
        }
        for (Lane lane : {Lane::Compute, Lane::Host}) {
          auto& v = lanes[lane];
          std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start_us < b->start_us; });
          for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1]->end_us, v[i]->start_us);
        }
      }
    }
}

TEST(TorchTraceReader, PhasesFollowTheCpuSide) {
  for (const char* run : kSingleRuns) {
    SCOPED_TRACE(run);
    const RankTrace r = read_torch_trace(t::trace_files(run).front());
    auto ms = mean_phase_ms(r);
    EXPECT_GT(ms[Phase::Forward], 1.0);
    EXPECT_GT(ms[Phase::Backward], ms[Phase::Forward]);
    EXPECT_GT(ms[Phase::Optimizer], 0.3);
    EXPECT_GT(ms[Phase::HostToDevice], 0.0);  // the batch's Memcpy HtoD
    for (const auto& s : r.steps) {
      // Forward before backward before the optimizer, within each step.
      int64_t fwd = 0, bwd = 0, opt = 0;
      for (const auto& in : s.intervals) {
        if (in.phase == Phase::Forward && !fwd) fwd = in.start_us;
        if (in.phase == Phase::Backward && !bwd) bwd = in.start_us;
        if (in.phase == Phase::Optimizer && !opt) opt = in.start_us;
      }
      EXPECT_LT(fwd, bwd);
      EXPECT_LT(bwd, opt);
    }
  }
  // num_workers 0: the batch is made on the training thread, 8 samples x 4 ms of CPU each.
  const auto nw0 = mean_phase_ms(read_torch_trace(t::trace_files("single-nw0").front()));
  const auto m = t::meta("single-nw0");
  const double loading_ms = m["batch"].get<double>() * m["sample_cpu_ms"].get<double>();
  EXPECT_GT(nw0.at(Phase::DataWait), 0.95 * loading_ms);
  EXPECT_LT(nw0.at(Phase::DataWait), 1.25 * loading_ms);
  // num_workers 4: the batch is ready when asked for.
  auto nw4 = mean_phase_ms(read_torch_trace(t::trace_files("single-nw4").front()));
  EXPECT_LT(nw4[Phase::DataWait], 0.5);
}

TEST(TorchTraceReader, RecomputeOnlyWithCheckpointing) {
  const auto ckpt = mean_phase_ms(read_torch_trace(t::trace_files("single-ckpt").front()));
  const auto plain = mean_phase_ms(read_torch_trace(t::trace_files("single-nw4").front()));
  // The time recompute kernels ran (the compute lane of a kernel-sampled step), not the span
  // from the first recompute kernel to the last.
  EXPECT_GT(ckpt.count(Phase::Recompute) ? ckpt.at(Phase::Recompute) : 0.0, 0.3);
  EXPECT_EQ(plain.count(Phase::Recompute), 0u);
  EXPECT_EQ(read_torch_trace(t::trace_files("single-ckpt").front()).known.value("checkpointing", false), true);
  EXPECT_FALSE(read_torch_trace(t::trace_files("single-nw4").front()).known.contains("checkpointing"));
}

TEST(TorchTraceReader, HelloAndKnownSettingsComeFromTheTrace) {
  const RankTrace single = read_torch_trace(t::trace_files("single-nw0").front());
  EXPECT_EQ(single.rank, 0);
  EXPECT_FALSE(single.has_distributed_info);
  EXPECT_EQ(single.hello.world_size, 1);
  EXPECT_EQ(single.hello.device, "NVIDIA H200");
  EXPECT_EQ(single.hello.device_memory_bytes, 150109880320);
  EXPECT_EQ(single.hello.device_kind, "cuda");
  EXPECT_EQ(single.hello.cuda, "13.0");
  EXPECT_EQ(single.hello.backend, "none");
  EXPECT_EQ(single.known["strategy"], "single");
  EXPECT_EQ(single.known["world_size"], 1);
  EXPECT_EQ(single.known["num_workers"], 0);  // _SingleProcessDataLoaderIter
  EXPECT_EQ(single.known["optimizer"], "adamw");
  EXPECT_EQ(single.known["steps"], 4);
  EXPECT_FALSE(single.known.contains("micro_batch"));
  EXPECT_FALSE(read_torch_trace(t::trace_files("single-nw4").front()).known.contains("num_workers"));

  const RankTrace rank1 = read_torch_trace(t::trace_files("ddp-nw4")[1]);
  EXPECT_TRUE(rank1.has_distributed_info);
  EXPECT_EQ(rank1.rank, 1);
  EXPECT_EQ(rank1.hello.world_size, 2);
  EXPECT_EQ(rank1.hello.local_rank, 1);
  EXPECT_EQ(rank1.hello.backend, "nccl");
  EXPECT_EQ(rank1.hello.nccl, "2.28.9");
  EXPECT_EQ(rank1.known["strategy"], "ddp");

  const RankTrace fsdp = read_torch_trace(t::trace_files("fsdp2-nw4").front());
  EXPECT_EQ(fsdp.known["strategy"], "fsdp");
  EXPECT_EQ(fsdp.known["fsdp_param_dtype"], "fp32");  // no MixedPrecisionPolicy: Float all-gathers
  EXPECT_EQ(fsdp.known["fsdp_reduce_dtype"], "fp32");
}

TEST(TorchTraceReader, PlainJsonReadsLikeGzip) {
  TempDir dir;
  const std::string gz = t::trace_files("ddp-nw4").front();
  const std::string plain = dir.file("rank0.json");  // what export_chrome_trace() writes
  store::test::write_bytes(plain, t::gunzip_file(gz));
  const RankTrace a = read_torch_trace(gz), b = read_torch_trace(plain);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i)
    EXPECT_EQ(protocol::to_json({{}, a.steps[i]}), protocol::to_json({{}, b.steps[i]}));
  EXPECT_EQ(a.json_bytes, b.file_bytes);
  EXPECT_LT(a.file_bytes, a.json_bytes / 5);
}

TEST(TorchTraceReader, ProgressCountsTheFileAndCanCancel) {
  const std::string file = t::trace_files("single-nw4").front();
  int64_t last = 0;
  int calls = 0;
  const RankTrace r = read_torch_trace(file, [&](int64_t read) {
    EXPECT_GE(read, last);
    last = read;
    ++calls;
    return true;
  });
  EXPECT_EQ(last, r.file_bytes);
  EXPECT_GE(calls, 1);
  const std::string why = message_of([&] { read_torch_trace(file, [](int64_t read) { return read < 200000; }); });
  EXPECT_NE(why.find("cancelled"), std::string::npos) << why;
}

// ---- bad input ------------------------------------------------------------------------------------

TEST(TorchTraceReader, NotJsonIsSaidSo) {
  TempDir dir;
  store::test::write_bytes(dir.file("notes.json"), "this is not JSON\n");
  const std::string why = message_of([&] { read_torch_trace(dir.file("notes.json")); });
  EXPECT_NE(why.find("notes.json is not valid JSON at byte"), std::string::npos) << why;
}

TEST(TorchTraceReader, JsonThatIsNotATraceIsSaidSo) {
  TempDir dir;
  store::test::write_bytes(dir.file("config.json"), R"({"model": "7b", "events": [{"ph": "X"}]})");
  std::string why = message_of([&] { read_torch_trace(dir.file("config.json")); });
  EXPECT_NE(why.find("config.json is not a torch.profiler trace: it has no \"traceEvents\""), std::string::npos) << why;
  // A Chrome trace, but not of PyTorch (e.g. Tunebench's own timeline export).
  store::test::write_bytes(
      dir.file("timeline.json"),
      R"({"traceEvents": [{"ph": "X", "name": "forward", "ts": 1, "dur": 2, "pid": 0, "tid": 2}]})");
  why = message_of([&] { read_torch_trace(dir.file("timeline.json")); });
  EXPECT_NE(why.find("timeline.json: it holds no PyTorch profiler events"), std::string::npos) << why;
  store::test::write_bytes(dir.file("array.json"), R"([{"ph": "X"}])");
  why = message_of([&] { read_torch_trace(dir.file("array.json")); });
  EXPECT_NE(why.find("not a torch.profiler trace"), std::string::npos) << why;
}

TEST(TorchTraceReader, TruncatedFilesAreSaidToBeTruncated) {
  TempDir dir;
  const std::string gz = t::trace_files("single-nw0").front();
  const std::string bytes = store::test::read_bytes(gz);
  store::test::write_bytes(dir.file("half.pt.trace.json.gz"), bytes.substr(0, bytes.size() / 2));
  std::string why = message_of([&] { read_torch_trace(dir.file("half.pt.trace.json.gz")); });
  EXPECT_NE(why.find("half.pt.trace.json.gz: the gzip stream ends before its end marker (the file is truncated)"),
            std::string::npos)
      << why;
  const std::string text = t::gunzip_file(gz);
  store::test::write_bytes(dir.file("half.json"), text.substr(0, text.size() / 2));
  why = message_of([&] { read_torch_trace(dir.file("half.json")); });
  EXPECT_NE(why.find("half.json is truncated: the JSON ends after"), std::string::npos) << why;
  // Cut inside the gzip trailer: all the JSON is there, the stream is still incomplete.
  store::test::write_bytes(dir.file("trailer.json.gz"), bytes.substr(0, bytes.size() - 3));
  why = message_of([&] { read_torch_trace(dir.file("trailer.json.gz")); });
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
}

TEST(TorchTraceReader, CorruptGzipIsSaidSo) {
  TempDir dir;
  std::string bytes = store::test::read_bytes(t::trace_files("single-nw0").front());
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  store::test::write_bytes(dir.file("bad.json.gz"), bytes);
  const std::string why = message_of([&] { read_torch_trace(dir.file("bad.json.gz")); });
  EXPECT_TRUE(why.find("corrupt gzip data") != std::string::npos || why.find("not valid JSON") != std::string::npos)
      << why;
}

TEST(TorchTraceReader, CpuOnlyRunIsRefused) {
  TempDir dir;
  t::rewrite_trace(t::trace_files("single-nw4").front(), dir.file("cpu.json"), [](nlohmann::json& j) {
    t::drop_events(j, [](const nlohmann::json& e) {
      const std::string cat = e.value("cat", "");
      return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_runtime" ||
             cat == "cuda_driver" || cat == "ac2g" || cat == "gpu_user_annotation";
    });
  });
  const std::string why = message_of([&] { read_torch_trace(dir.file("cpu.json")); });
  EXPECT_NE(why.find("cpu.json: it is a trace of a CPU-only run: it holds no GPU kernels"), std::string::npos) << why;
}

TEST(TorchTraceReader, AnotherAcceleratorsTraceIsRefusedAsSuchNotAsCpuOnly) {
  // The CPU side of a real trace, its device side recorded by MTIA's profiler: runtime calls in
  // mtia_runtime, device work in mtia_ccp_events, nothing launched through CUDA.
  TempDir dir;
  t::rewrite_trace(t::trace_files("single-nw4").front(), dir.file("mtia.json"), [](nlohmann::json& j) {
    for (auto& e : j["traceEvents"]) {
      const std::string cat = e.value("cat", "");
      if (cat == "cuda_runtime" || cat == "cuda_driver") e["cat"] = "mtia_runtime";
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") e["cat"] = "mtia_ccp_events";
    }
  });
  const std::string why = message_of([&] { read_torch_trace(dir.file("mtia.json")); });
  EXPECT_NE(why.find("mtia.json: it is a trace of a run on an accelerator other than a CUDA GPU (MTIA)"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("CPU-only"), std::string::npos) << why;
}

TEST(TorchTraceReader, WithoutProfilerStepsTheWholeWindowIsOneStepAndSaysSo) {
  TempDir dir;
  const std::string file = t::trace_files("single-nw4").front();
  t::rewrite_trace(file, dir.file("nosteps.json"), [](nlohmann::json& j) {
    t::drop_events(j, [](const nlohmann::json& e) { return e.value("name", "").rfind("ProfilerStep#", 0) == 0; });
  });
  const RankTrace r = read_torch_trace(dir.file("nosteps.json"));
  ASSERT_EQ(r.steps.size(), 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("no ProfilerStep#N markers"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("is imported as one step"), std::string::npos) << r.warnings[0];
  // The one step spans at least the four profiled steps, and holds all of their GPU work.
  double four_us = 0;
  for (double d : t::profiler_step_durations_us(file)) four_us += d;
  EXPECT_GE(r.steps[0].step_ms * 1000.0, four_us * 0.98);
  const RankTrace with = read_torch_trace(file);
  int64_t optimizer_with = 0, optimizer_without = 0;
  for (const auto& s : with.steps)
    for (const auto& in : s.intervals) optimizer_with += in.phase == Phase::Optimizer ? in.duration_us() : 0;
  for (const auto& in : r.steps[0].intervals) optimizer_without += in.phase == Phase::Optimizer ? in.duration_us() : 0;
  EXPECT_GT(optimizer_without, 0);
  EXPECT_NEAR(static_cast<double>(optimizer_without), static_cast<double>(optimizer_with), 0.05 * optimizer_with);
}

TEST(TorchTraceReader, DetectsTracesAndEventLogsByContent) {
  TempDir dir;
  EXPECT_EQ(detect_file_kind(t::trace_files("single-nw0").front()), FileKind::TorchTrace);
  store::test::write_bytes(dir.file("trace.txt"), t::gunzip_file(t::trace_files("single-nw0").front()));
  EXPECT_EQ(detect_file_kind(dir.file("trace.txt")), FileKind::TorchTrace);
  EXPECT_EQ(detect_file_kind(std::string(TUNEBENCH_TEST_DATA_DIR) + "/analysis/forum_ddp.jsonl"), FileKind::EventLog);
  store::test::write_bytes(dir.file("a.json"), "{\"a\": 1}\n");
  EXPECT_EQ(detect_file_kind(dir.file("a.json")), FileKind::Unknown);
  store::test::write_bytes(dir.file("b.txt"), "hello\n");
  EXPECT_EQ(detect_file_kind(dir.file("b.txt")), FileKind::Unknown);
  EXPECT_THROW(detect_file_kind(dir.file("missing.json")), TraceError);
}

}  // namespace
}  // namespace tunebench::import
