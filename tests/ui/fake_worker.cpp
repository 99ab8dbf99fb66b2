// tunebench-fake-worker: a stand-in for tunebench-worker that speaks the same contract (args, env,
// event channel, exit codes) without libtorch, so the runner and the window can be tested anywhere.
//
//   tunebench-fake-worker --config trial.json --events SPEC --trial ID      (env: RANK, WORLD_SIZE, ...)
//   tunebench-fake-worker --synthesize OUT.jsonl --preset 7b-ddp [--steps N] [--ranks N] [--step-ms MS]
//
// Misbehaviour is injected through the environment (the runner passes its own environment on):
//   TUNEBENCH_FAKE_MODE      ok | crash (SIGSEGV) | abort | exit:N (with an error event) | hang | ignore-term
//   TUNEBENCH_FAKE_RANK      the rank that misbehaves (default 0; others run normally)
//   TUNEBENCH_FAKE_AT_STEP   step at which it misbehaves (default 2)
//   TUNEBENCH_FAKE_STEP_MS   wall time per step (default 20)
// It deliberately does no training: the timings are made up, shaped like a real step.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>

#include "core/config/trial_config.h"
#include "core/protocol/event_writer.h"

using namespace tunebench;
using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

namespace {

std::string arg_value(int argc, char** argv, const std::string& name, const std::string& fallback = {}) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

std::string env_str(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// One step's intervals laid out like a DDP/FSDP step of `step_us`, starting at `t`.
protocol::Step make_step(const config::TrialConfig& c, int rank, int64_t index, int64_t t, int64_t step_us, bool gpu) {
  protocol::Step s;
  s.step = index;
  s.warmup = index < c.warmup;
  s.start_us = t;
  s.end_us = t + step_us;
  s.step_ms = double(step_us) / 1000.0;
  s.tokens = c.tokens_per_rank_step();
  s.loss = 10.4 - 0.05 * double(index) + 0.01 * rank;
  const int64_t jitter = (index * 7919 + rank * 104729) % std::max<int64_t>(1, step_us / 40);
  auto add = [&](Lane lane, Phase phase, int64_t a, int64_t b, std::string label = {}, int64_t bytes = 0) {
    Interval in{lane, phase, t + a, t + b, std::move(label), bytes, 0.0};
    if (bytes > 0 && b > a) in.busbw_gbps = double(bytes) / double(b - a) / 1e3 * (c.world_size > 1 ? 2.0 * (c.world_size - 1) / c.world_size : 1.0);
    s.intervals.push_back(in);
  };
  const int64_t u = step_us;
  add(Lane::Host, Phase::DataWait, 0, u / 25 + jitter);
  add(Lane::Host, Phase::HostToDevice, u / 25 + jitter, u / 20 + jitter);
  const int64_t fwd0 = u / 20 + jitter, fwd1 = u * 35 / 100, bwd1 = u * 88 / 100;
  if (c.strategy == config::Strategy::Fsdp) {
    for (int b = 0; b < 4; ++b) {
      const int64_t a = fwd0 + (fwd1 - fwd0) * b / 4;
      add(Lane::Comm, Phase::AllGather, a, a + (fwd1 - fwd0) / 6, "block " + std::to_string(b), 404750336 / 2);
    }
  }
  add(Lane::Compute, Phase::Forward, fwd0, fwd1);
  if (c.checkpointing) {
    add(Lane::Compute, Phase::Recompute, fwd1, fwd1 + (bwd1 - fwd1) / 4);
    add(Lane::Compute, Phase::Backward, fwd1 + (bwd1 - fwd1) / 4, bwd1);
  } else {
    add(Lane::Compute, Phase::Backward, fwd1, bwd1);
  }
  if (c.strategy == config::Strategy::Ddp) {
    const int buckets = 6;
    for (int b = 0; b < buckets; ++b) {
      const int64_t a = fwd1 + (bwd1 - fwd1) * (b + 1) / (buckets + 1);
      add(Lane::Comm, Phase::AllReduce, a, a + (bwd1 - fwd1) / 9, "bucket " + std::to_string(b), int64_t(c.bucket_mb * (1 << 20)));
    }
  } else if (c.strategy == config::Strategy::Fsdp) {
    for (int b = 0; b < 4; ++b) {
      const int64_t a = fwd1 + (bwd1 - fwd1) * (b + 1) / 5;
      add(Lane::Comm, Phase::ReduceScatter, a, a + (bwd1 - fwd1) / 8, "block " + std::to_string(3 - b), 404750336);
    }
  }
  add(Lane::Compute, Phase::Optimizer, bwd1 + u / 50, u);
  for (const auto& in : s.intervals)
    if (in.lane == Lane::Comm) s.comm_ms += double(in.duration_us()) / 1000.0;
  const int64_t gib = int64_t(1) << 30;
  s.memory.allocated_bytes = gpu ? 60 * gib + rank * gib : 300 << 20;
  s.memory.reserved_bytes = s.memory.allocated_bytes + (gpu ? 8 * gib : 0);
  s.memory.peak_bytes = s.memory.allocated_bytes + (gpu ? 30 * gib : 0);
  return s;
}

protocol::GpuSample make_sample(int rank, int64_t index, bool gpu) {
  protocol::GpuSample g;
  const double wobble = double((index * 37 + rank * 11) % 17);
  if (gpu) {
    g.index = rank;
    g.util_pct = 80.0 + wobble;
    g.mem_used_bytes = (int64_t(90) << 30) + (int64_t(rank) << 30);
    g.mem_total_bytes = int64_t(143771) << 20;
    g.power_w = 520.0 + 6.0 * wobble;
  } else {
    g.cpu_pct = 90.0 + wobble;
    g.rss_bytes = (int64_t(700) << 20) + (int64_t(rank) << 24);
  }
  return g;
}

protocol::Hello make_hello(const config::TrialConfig& c, int rank, bool gpu) {
  protocol::Hello h;
  h.host = "fakehost";
  h.pid = ::getpid();
  h.world_size = c.world_size;
  h.local_rank = rank;
  h.device = gpu ? "NVIDIA H200" : "cpu";
  h.device_kind = gpu ? "cuda" : "cpu";
  h.device_memory_bytes = gpu ? int64_t(143771) << 20 : 0;
  h.torch = "fake";
  h.backend = c.world_size > 1 ? (gpu ? "nccl" : "gloo") : "none";
  h.config = config::to_json(c);
  return h;
}

// --synthesize: every rank of a run, interleaved in time order, into one .jsonl file.
int synthesize(int argc, char** argv) {
  const std::string out = arg_value(argc, argv, "--synthesize");
  const std::string preset = arg_value(argc, argv, "--preset", "7b-ddp");
  auto c = config::trial_preset(preset);
  if (!c) {
    std::cerr << "unknown preset " << preset << "\n";
    return 2;
  }
  if (auto n = arg_value(argc, argv, "--steps"); !n.empty()) c->steps = std::stoi(n);
  if (auto n = arg_value(argc, argv, "--ranks"); !n.empty()) c->world_size = std::stoi(n);
  const int64_t step_us = int64_t(std::stod(arg_value(argc, argv, "--step-ms", "375")) * 1000);
  const bool gpu = c->device != config::Device::Cpu;
  const std::string trial = arg_value(argc, argv, "--trial", "synthetic-" + preset);
  protocol::EventWriter writer(protocol::open_line_sink("file:" + out));
  const int64_t t0 = 1796083200000000;  // 2026-12-01 00:00 UTC: fixed, so the file is reproducible
  auto emit = [&](int rank, int64_t t, protocol::Payload p) {
    writer.write(protocol::Event{{protocol::kSchemaVersion, trial, rank, t}, std::move(p)});
  };
  for (int r = 0; r < c->world_size; ++r) emit(r, t0 + r * 150, make_hello(*c, r, gpu));
  for (int r = 0; r < c->world_size; ++r) {
    protocol::ModelInfo m;
    m.parameters = 6738415616;
    m.matmul_parameters = 6607343616;
    m.flops_per_token = 6.0 * 6607343616 + 12.0 * 32 * 4096 * 2048;
    m.flops_formula = "6*N_matmul + 12*L*D*T (PaLM appendix B)";
    emit(r, t0 + 1000 + r, m);
  }
  int64_t t = t0 + 2'000'000;  // model build
  for (int64_t s = 0; s < c->steps; ++s) {
    const int64_t us = s == 0 ? step_us * 3 : step_us + (s * 1543) % (step_us / 30 + 1);
    for (int r = 0; r < c->world_size; ++r) {
      emit(r, t + us + 200 + r * 40, make_step(*c, r, s, t + r * 30, us, gpu));
      emit(r, t + us / 2 + r * 20, make_sample(r, s, gpu));
    }
    t += us;
  }
  for (int r = 0; r < c->world_size; ++r) emit(r, t + 5000 + r, protocol::Done{0, {}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!arg_value(argc, argv, "--synthesize").empty()) return synthesize(argc, argv);

  const int rank = env_int("RANK", 0);
  const std::string trial = arg_value(argc, argv, "--trial");
  const std::string events = arg_value(argc, argv, "--events", "stdout");
  config::TrialConfig c;
  if (auto path = arg_value(argc, argv, "--config"); !path.empty()) {
    std::ifstream in(path);
    const auto parsed = config::from_json(nlohmann::json::parse(in, nullptr, false));
    if (!parsed.ok()) {
      std::cerr << "fake worker: bad config\n" << config::describe(parsed.problems);
      return 2;
    }
    c = parsed.config;
  }
  if (env_int("WORLD_SIZE", -1) != c.world_size) {
    std::cerr << "fake worker: WORLD_SIZE does not match the config\n";
    return 2;
  }
  const std::string mode = env_str("TUNEBENCH_FAKE_MODE", "ok");
  const bool misbehave = env_int("TUNEBENCH_FAKE_RANK", 0) == rank;
  const int at_step = env_int("TUNEBENCH_FAKE_AT_STEP", 2);
  const int step_ms = env_int("TUNEBENCH_FAKE_STEP_MS", 20);
  if (misbehave && mode == "ignore-term") std::signal(SIGTERM, SIG_IGN);

  std::unique_ptr<protocol::LineSink> sink;
  try {
    sink = protocol::open_line_sink(events);
  } catch (const std::exception& e) {
    std::cerr << "fake worker: " << e.what() << "\n";
    return 6;
  }
  protocol::EventWriter writer(std::move(sink));
  writer.set_identity(trial, rank);
  std::cerr << "fake worker rank " << rank << " of " << c.world_size << " starting, MASTER_PORT="
            << env_str("MASTER_PORT", "?") << "\n";
  std::cout << "fake stdout line from rank " << rank << std::endl;
  writer.write_payload(make_hello(c, rank, false));

  for (int64_t s = 0; s < c.steps; ++s) {
    if (misbehave && s == at_step) {
      if (mode == "crash") {
        std::cerr << "fake worker: about to dereference a null pointer\n";
        std::raise(SIGSEGV);
      }
      if (mode == "abort") std::abort();
      if (mode.rfind("exit:", 0) == 0) {
        const int code = std::atoi(mode.c_str() + 5);
        writer.write_payload(protocol::Error{code == 3 ? "oom" : "crash",
                                             "fake failure with exit code " + std::to_string(code), nlohmann::json::object()});
        std::cerr << "fake worker: failing with exit code " << code << "\n";
        return code;
      }
      if (mode == "hang" || mode == "ignore-term") {
        std::cerr << "fake worker: hanging\n";
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }
    const int64_t start = protocol::now_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
    const int64_t end = protocol::now_us();
    writer.write_payload(make_step(c, rank, s, start, end - start, false));
    writer.write_payload(make_sample(rank, s, false));
  }
  writer.write_payload(protocol::Done{0, {}});
  std::cerr << "fake worker rank " << rank << " done\n";
  return writer.ok() ? 0 : 6;
}
