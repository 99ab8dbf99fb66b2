// How many events per second the session store ingests: live through TrialWriter (batched
// transactions, the GUI's path) and from a .jsonl log through the importer (JSON parsing
// included). Steps carry either a small DDP-like set of 6 intervals or a 7B-FSDP-like set of
// 160 (32 blocks x forward, backward, all-gather x2, reduce-scatter). Results go into
// docs/STORE.md with date, machine and command.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/protocol/event_writer.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"

namespace tp = tunebench::protocol;
namespace ts = tunebench::store;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kT0 = 1'764'000'000'000'000;

tp::Event step(int rank, int64_t index, int intervals) {
  tp::Step s;
  s.step = index;
  s.start_us = kT0 + index * 1'000'000;
  s.end_us = s.start_us + 900'000;
  s.step_ms = 900.0;
  s.tokens = 16384;
  s.loss = 2.5;
  s.comm_ms = 100.0;
  const tp::Phase phases[] = {tp::Phase::Forward, tp::Phase::Backward, tp::Phase::AllGather,
                              tp::Phase::AllGather, tp::Phase::ReduceScatter, tp::Phase::AllReduce};
  for (int i = 0; i < intervals; ++i) {
    const tp::Phase ph = phases[i % 6];
    const bool comm = tp::default_lane(ph) == tp::Lane::Comm;
    s.intervals.push_back({tp::default_lane(ph), ph, s.start_us + i * 5000, s.start_us + i * 5000 + 4000,
                           comm ? "block " + std::to_string(i / 6) : "", comm ? 404'750'336 : 0,
                           comm ? 310.5 : 0.0});
  }
  tp::Event e;
  e.header.trial = "bench";
  e.header.rank = rank;
  e.header.t_us = s.end_us;
  e.payload = std::move(s);
  return e;
}

tp::Event sample(int rank, int64_t t) {
  tp::GpuSample g;
  g.index = rank;
  g.util_pct = 98.0;
  g.mem_used_bytes = 100'000'000'000;
  g.power_w = 690.0;
  tp::Event e;
  e.header.rank = rank;
  e.header.t_us = t;
  e.payload = g;
  return e;
}

// The event stream of a 2-rank run: per step, one step event and 10 GPU samples per rank.
std::vector<tp::Event> stream(int steps, int intervals) {
  std::vector<tp::Event> out;
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < 2; ++r) {
      out.push_back(step(r, s, intervals));
      for (int k = 0; k < 10; ++k) out.push_back(sample(r, kT0 + s * 1'000'000 + k * 100'000));
    }
  return out;
}

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "tb-bench-XXXXXX").string();
    dir = mkdtemp(t.data());
  }
  ~Scratch() { fs::remove_all(dir); }
};

void BM_TrialWriterIngest(benchmark::State& state) {
  const auto events = stream(200, static_cast<int>(state.range(0)));
  Scratch scratch;
  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string path = (scratch.dir / ("w" + std::to_string(n++) + ".tbsession")).string();
    const int64_t id = ts::SessionStore::create(path, "bench").add_trial("t", {});
    state.ResumeTiming();
    ts::TrialWriter writer(path, id);
    for (const auto& e : events) writer.add(e);
    writer.finish(ts::TrialStatus::Done);
  }
  const auto total = static_cast<double>(events.size()) * static_cast<double>(state.iterations());
  state.counters["events/s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  state.counters["intervals/s"] = benchmark::Counter(
      total / 11.0 * static_cast<double>(state.range(0)), benchmark::Counter::kIsRate);
}

void BM_ImportJsonl(benchmark::State& state) {
  const auto events = stream(200, static_cast<int>(state.range(0)));
  Scratch scratch;
  const std::string log = (scratch.dir / "run.jsonl").string();
  {
    tp::EventWriter w(tp::open_line_sink("file:" + log));
    for (const auto& e : events) w.write(e);
  }
  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string path = (scratch.dir / ("i" + std::to_string(n++) + ".tbsession")).string();
    auto store = ts::SessionStore::create(path, "bench");
    state.ResumeTiming();
    benchmark::DoNotOptimize(ts::import_event_log(store, log).events);
  }
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(events.size()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_TrialWriterIngest)->Arg(6)->Arg(160)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ImportJsonl)->Arg(6)->Arg(160)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
