// tunebench-fake-worker: a stand-in for tunebench-worker that speaks the same contract (args, env,
// event channel, exit codes) without libtorch, so the runner and the window can be tested anywhere.
//
//   tunebench-fake-worker --config trial.json --events SPEC --trial ID      (env: RANK, WORLD_SIZE, ...)
//   tunebench-fake-worker --synthesize OUT.jsonl --preset 7b-ddp [--steps N] [--ranks N] [--step-ms MS]
//
// Misbehaviour is injected through the environment (the runner passes its own environment on):
//   TUNEBENCH_FAKE_MODE      ok | crash (SIGSEGV) | abort | exit:N (with an error event) | hang | ignore-term
//                            | garbage (one malformed event line, then on as normal)
//                            | stall (the rank stops stepping but stays alive, sending samples; the
//                            others wait for it as in a collective until the config's
//                            collective_timeout_s has passed, then fail as the real worker's watchdog
//                            does: a "timeout" error event and exit code 4)
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
#include "tests/ui/fake_events.h"

using namespace tunebench;
using fake::make_hello;
using fake::make_sample;
using fake::make_step;

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
  protocol::LineSink* raw_sink = sink.get();  // for the garbage mode's malformed line
  protocol::EventWriter writer(std::move(sink));
  writer.set_identity(trial, rank);
  std::cerr << "fake worker rank " << rank << " of " << c.world_size << " starting, MASTER_PORT="
            << env_str("MASTER_PORT", "?") << "\n";
  std::cout << "fake stdout line from rank " << rank << std::endl;
  writer.write_payload(make_hello(c, rank, false));

  for (int64_t s = 0; s < c.steps; ++s) {
    if (mode == "stall" && s == at_step) {
      if (misbehave) {
        std::cerr << "fake worker: stalled\n";
        for (int64_t k = 0;; ++k) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          writer.write_payload(make_sample(rank, s + k, false));
        }
      }
      // Half a second past the timeout, as a watchdog polling its deadline reports it; its telemetry
      // goes on meanwhile, as the real worker's sampler thread does.
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(c.collective_timeout_s * 1000) + 500);
      for (int64_t k = 0; std::chrono::steady_clock::now() < until; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        writer.write_payload(make_sample(rank, s + k, false));
      }
      writer.write_payload(protocol::Error{"timeout", "no progress: waiting for another rank in a collective",
                                           {{"in_collective", true}}});
      std::cerr << "fake worker: timed out waiting for a peer\n";
      return 4;
    }
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
      if (mode == "garbage")
        raw_sink->write_line("{\"v\":1,\"type\":\"step\",\"rank\":" + std::to_string(rank) + ",\"step\":");
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
