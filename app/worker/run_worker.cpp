#include "run_worker.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <typeinfo>

#include <c10/util/Exception.h>

#include "core/engine/comm/communicator.h"
#include "core/engine/compat.h"
#include "core/engine/device.h"
#include "core/engine/errors.h"
#include "core/engine/memory_sampler.h"
#include "core/engine/switches.h"
#include "core/engine/trainer.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/exit_codes.h"
#include "core/telemetry/allocator_snapshot_file.h"
#include "core/telemetry/nvml.h"
#include "core/telemetry/sampler_thread.h"
#include "link_probe.h"
#include "watchdog.h"

extern char** environ;  // POSIX: the process environment

namespace tunebench::worker {
namespace {

using protocol::EventWriter;

void log(int rank, const std::string& message) { std::cerr << "[tunebench-worker rank " << rank << "] " << message << "\n"; }

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// The environment a trial records in its hello: the NCCL variables (NCCL reads them itself) and
// the worker's switches that are set (core/engine/switches.h), which change what it measures.
std::map<std::string, std::string> recorded_environment(const engine::Switches& switches) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq);
    if (key.rfind("NCCL_", 0) == 0 || key.rfind("TORCH_NCCL_", 0) == 0) env[key] = kv.substr(eq + 1);
  }
  for (const auto& [name, value] : switches.set) env[name] = value;
  return env;
}

// libtorch's out-of-memory messages: the CUDA caching allocator's ("CUDA out of memory. Tried to
// allocate 1.95 GiB") and the CPU allocator's ("DefaultCPUAllocator: can't allocate memory: you
// tried to allocate 103200000000 bytes").
bool is_out_of_memory(const std::string& message) {
  return message.find("out of memory") != std::string::npos ||
         message.find("can't allocate memory") != std::string::npos;
}

// "Tried to allocate 1.95 GiB" / "you tried to allocate 1032 bytes" -> bytes.
int64_t requested_bytes(const std::string& message) {
  static const std::regex cpu(R"(tried to allocate ([0-9]+) bytes)");
  std::smatch m;
  if (std::regex_search(message, m, cpu)) return static_cast<int64_t>(std::stod(m[1]));
  static const std::regex re(R"(Tried to allocate ([0-9.]+) (B|KiB|MiB|GiB|TiB))");
  if (!std::regex_search(message, m, re)) return 0;
  const double v = std::stod(m[1]);
  const std::string unit = m[2];
  const double mult = unit == "KiB" ? 1024.0 : unit == "MiB" ? 1048576.0 : unit == "GiB" ? 1073741824.0
                      : unit == "TiB" ? 1099511627776.0 : 1.0;
  return static_cast<int64_t>(v * mult);
}

// Extra seconds the rendezvous watchdog gives the rendezvous' own deadline, which reports how many
// ranks arrived; the watchdog only ends calls that never return.
constexpr double kRendezvousGraceS = 5.0;

// The end of a rank from another thread: the error event is written, `done` follows, no
// destructor runs (the training thread is blocked somewhere we cannot unwind).
[[noreturn]] void end_process(EventWriter* w, int rank, int code, const std::string& message) {
  log(rank, message);
  protocol::Done done;
  done.exit_code = code;
  w->write_payload(done);
  std::_Exit(code);
}

// Exceptions thrown on threads the worker does not own (Gloo's I/O threads throw
// gloo::EnforceNotMet when a peer misbehaves) end in std::terminate. They still become an error
// event: kind "comm" for Gloo's, "crash" otherwise.
EventWriter* g_writer = nullptr;
int g_rank = 0;

[[noreturn]] void on_terminate() {
  std::string what = "std::terminate without an exception";
  bool gloo = false;
  if (auto current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception that is not a std::exception";
    }
    const std::type_info* type = abi::__cxa_current_exception_type();
    gloo =
        (type && std::string(type->name()).find("gloo") != std::string::npos) || what.find("gloo") != std::string::npos;
  }
  ::alarm(5);  // the writer's lock may be held by the thread that was interrupted
  const int code = gloo ? protocol::kExitCommunication : protocol::kExitInternal;
  const std::string message = (gloo ? "Gloo failed on a communication thread: " : "uncaught exception: ") + what;
  if (g_writer) {
    g_writer->write_payload(protocol::Error{gloo ? "comm" : "crash", message, nlohmann::json::object()});
    end_process(g_writer, g_rank, code, message);
  }
  log(g_rank, message);
  std::_Exit(code);
}

int fail(EventWriter* writer, int rank, const std::string& kind, int code, const std::string& message,
         nlohmann::json details = nlohmann::json::object()) {
  log(rank, kind + " error: " + message);
  if (writer) {
    writer->write_payload(protocol::Error{kind, message, std::move(details)});
    protocol::Done done;
    done.exit_code = code;
    writer->write_payload(done);
  }
  return code;
}

// One sentence a person can act on, with libtorch's own words after it.
std::string oom_message(const engine::DeviceContext* device, int64_t requested, const std::string& raw) {
  const bool gpu = device && device->is_cuda();
  std::string s = std::string("out of ") + (gpu ? "GPU" : "host") + " memory";
  if (requested > 0) {  // in MiB below a GiB: "a tensor of 0.0 GiB" was 44 MiB
    const double mib = static_cast<double>(requested) / (1024.0 * 1024.0);
    char size[32];
    if (mib >= 1024.0)
      std::snprintf(size, sizeof size, "%.1f GiB", mib / 1024.0);
    else
      std::snprintf(size, sizeof size, "%.0f MiB", std::max(1.0, mib));
    s += std::string(": a tensor of ") + size + " could not be allocated";
  }
  return s + ". Lower micro_batch or seq_len, or turn on checkpointing. (" + raw + ")";
}

// TUNEBENCH_MEMORY_SNAPSHOT: a snapshot written to the file the switch names (replacing it). A file
// that cannot be written is said on stderr; the trial goes on.
void dump_snapshot(const std::string& path, int rank, const metrics::AllocatorSnapshot& snapshot,
                   telemetry::SnapshotMeta meta) {
  if (path.empty()) return;
  try {
    telemetry::write_snapshot_file(path, snapshot, meta);
  } catch (const std::exception& e) {
    log(rank, std::string("TUNEBENCH_MEMORY_SNAPSHOT: ") + e.what());
  }
}

// The allocator's state when it ran out of memory (libtorch 2.x CUDA builds: the engine's
// observer recorded it before the exception unwound the step), bounded: the categories, the phase
// and step, the request, the 16 largest held blocks.
void add_oom_record(nlohmann::json& d, const std::string& dump, int rank, const std::string& device_name) {
  std::optional<engine::OomRecord> r = engine::MemorySampler::take_oom_record();
  if (!r) return;
  d["memory_categories"] = protocol::memory_categories_to_json(r->categories);
  d["oom_phase"] = r->categories.phase;
  d["oom_step"] = r->step;
  if (r->requested_bytes > 0) d["requested_bytes"] = r->requested_bytes;
  d["device_free_bytes"] = r->device_free_bytes;
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& [bytes, category] : r->largest_blocks) blocks.push_back({{"bytes", bytes}, {"category", category}});
  d["largest_blocks"] = std::move(blocks);
  if (!r->problem.empty()) d["memory_categories_problem"] = r->problem;
  telemetry::SnapshotMeta meta;
  meta.device = device_name;
  meta.phase = "oom";
  meta.step = r->step;
  meta.note = "out of memory in the " + r->categories.phase + " of step " + std::to_string(r->step);
  dump_snapshot(dump, rank, r->snapshot, meta);
}

nlohmann::json memory_details(const engine::DeviceContext* device) {
  nlohmann::json d = nlohmann::json::object();
  if (!device) return d;
  const auto m = device->memory();
  d["allocated_bytes"] = m.allocated_bytes;
  d["reserved_bytes"] = m.reserved_bytes;
  d["peak_bytes"] = m.peak_bytes;
  d["alloc_retries"] = m.alloc_retries;
  d["total_bytes"] = device->total_memory_bytes();
  return d;
}

}  // namespace

int run_worker(WorkerOptions options, const RankEnv& env) {
  const int rank = env.rank;
  // The TUNEBENCH_* switches, read here once; the hello records those set, the trainer gets them.
  const engine::Switches switches = engine::read_switches();
  // 1. The event channel: without it nothing can be reported except on stderr.
  std::unique_ptr<EventWriter> writer;
  try {
    writer = std::make_unique<EventWriter>(protocol::open_line_sink(options.events, options.event_token));
  } catch (const std::exception& e) {
    log(rank, std::string("cannot open the event channel: ") + e.what());
    return protocol::kExitEventChannel;
  }
  writer->set_identity(options.trial, rank);
  g_writer = writer.get();
  g_rank = rank;
  std::set_terminate(on_terminate);
  if (options.exit_code != 0 || !options.problems.empty())
    return fail(writer.get(), rank, "config", protocol::kExitConfig, config::describe(options.problems));
  if (!switches.problems.empty())
    return fail(writer.get(), rank, "config", protocol::kExitConfig, switches.problems.front());
  for (const auto& w : options.warnings) log(rank, "warning: " + w);

  // 2. The configuration, checked before any device work. A launcher's world size wins.
  config::TrialConfig& cfg = options.config;
  if (env.source != "none") cfg.world_size = env.world_size;
  // A link probe needs the ranks' communicator and nothing else of a strategy.
  if (options.probe_link && cfg.world_size < 2)
    return fail(writer.get(), rank, "config", protocol::kExitConfig,
                "--probe-link measures the link between ranks: start two or more (torchrun --nproc-per-node 2, "
                "or the GUI's Ranks)");
  if (options.probe_link && cfg.strategy == config::Strategy::Single) cfg.strategy = config::Strategy::Ddp;
  if (options.print_config) {
    std::cout << config::to_json(cfg).dump(2) << std::endl;
    return protocol::kExitOk;
  }
  for (const auto& w : options.warnings) writer->write_payload(protocol::Warning{"hf_config", w});
  if (const auto problems = config::validate(cfg); !problems.empty()) {
    nlohmann::json details = nlohmann::json::array();
    for (const auto& p : problems) details.push_back({{"key", p.key}, {"message", p.message}});
    return fail(writer.get(), rank, "config", protocol::kExitConfig, config::describe(problems),
                {{"problems", details}});
  }

  std::unique_ptr<engine::DeviceContext> device;
  try {
    // 3. Device and hello.
    device = std::make_unique<engine::DeviceContext>(engine::DeviceContext::create(cfg.device, env.local_rank));

    // 3b. Ranks meet (ddp/fsdp). NCCL reads its variables when the communicator is created.
    std::unique_ptr<engine::Communicator> comm;
    if (cfg.strategy != config::Strategy::Single) {
      for (const auto& [name, value] : cfg.nccl_env) ::setenv(name.c_str(), value.c_str(), 1);
      engine::RendezvousInfo rv;
      rv.rank = rank;
      rv.world_size = cfg.world_size;
      rv.local_rank = env.local_rank;
      rv.master_addr = env.master_addr;
      rv.master_port = env.master_port;
      // validate() bounds both timeouts to a week, so these products cannot overflow.
      rv.timeout = std::chrono::milliseconds(static_cast<int64_t>(cfg.rendezvous_timeout_s * 1000));
      rv.collective_timeout = std::chrono::milliseconds(static_cast<int64_t>(cfg.collective_timeout_s * 1000));
      rv.host = hostname();
      rv.config_json = config::to_json(cfg).dump();
      log(rank, "joining " + std::to_string(cfg.world_size) + " ranks at " + env.master_addr + ":" +
                    std::to_string(env.master_port));
      // Every blocking call of the rendezvous (a store that never answers because a foreign
      // program listens on MASTER_PORT, a peer stuck in its own start-up) ends with the timeout.
      EventWriter* w = writer.get();
      const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
      Watchdog meeting(cfg.rendezvous_timeout_s + kRendezvousGraceS, [w, rank, where](double waited) {
        const std::string msg = "rendezvous at " + where + " failed: the ranks did not meet within " +
                                std::to_string(static_cast<int64_t>(waited)) +
                                " s (is another program listening on MASTER_PORT?)";
        w->write_payload(protocol::Error{"rendezvous", msg, {{"waited_s", waited}}});
        end_process(w, rank, protocol::kExitCommunication, msg);
      });
      comm = engine::make_communicator(rv, device->device());
      if (switches.collective_delay_rank == rank) comm->set_arrival_delay_ms(switches.collective_delay_ms);
    }
    telemetry::Nvml nvml;
    protocol::Hello hello;
    hello.host = hostname();
    hello.pid = ::getpid();
    hello.world_size = cfg.world_size;
    hello.local_rank = env.local_rank;
    hello.device = device->name();
    hello.device_kind = device->is_cuda() ? "cuda" : "cpu";
    hello.device_memory_bytes = device->total_memory_bytes();
    hello.driver = nvml.driver_version();
    hello.cuda = device->cuda_version();
    hello.cudnn = device->cudnn_version();
    hello.torch = engine::compat::torch_version();
    hello.backend = comm ? comm->backend() : "none";
    hello.nccl = comm && comm->backend() == "nccl" ? comm->version() : "";
    hello.env = recorded_environment(switches);
    hello.topology = nvml.topology();
    hello.config = config::to_json(cfg);
    writer->write_payload(hello);
    log(rank, "training " + cfg.model + " (" + std::string(config::to_string(cfg.strategy)) + ", " +
                  std::to_string(cfg.world_size) + " rank(s)) on " + hello.device);

    // 4. Telemetry at gpu_sample_hz while training runs.
    EventWriter* w = writer.get();
    telemetry::SamplerThread sampler(device->is_cuda() ? device->device().index() : -1, cfg.gpu_sample_hz,
                                     [w](protocol::GpuSample s) { w->write_payload(std::move(s)); },
                                     [w](protocol::Warning notice) { w->write_payload(std::move(notice)); });

    // 5. Train. A rank that makes no progress for collective_timeout_s ends with an error.
    const engine::Communicator* peers = comm.get();
    Watchdog watchdog(cfg.collective_timeout_s, [w, rank, peers](double waited) {
      std::string msg = "no progress for " + std::to_string(static_cast<int64_t>(waited)) + " s";
      // Inside a collective this rank waited for the others; outside any, its own step stalled
      // (the runner then names the rank the others waited for: core/launch/trial_supervisor.h).
      const bool in_collective = peers && peers->collective_in_flight();
      if (!peers)
        msg += ": the training step hangs";
      else if (in_collective)
        msg += " waiting in a collective: another rank died or hangs. " + peers->describe_lost_peers();
      else {
        msg += " outside any collective: this rank's own step stalled";
        const std::string lost = peers->describe_lost_peers();  // a peer that died is still worth naming
        if (lost.find(" exited.") != std::string::npos) msg += ". " + lost;
      }
      w->write_payload(protocol::Error{"timeout", msg, {{"waited_s", waited}, {"in_collective", in_collective}}});
      end_process(w, rank, protocol::kExitCommunication, msg);
    });
    if (options.probe_link) return run_link_probe(options, *comm, *device, *writer, [&watchdog] { watchdog.kick(); });

    engine::RankInfo info{rank, cfg.world_size, env.local_rank};
    engine::Trainer trainer(cfg, *device, info,
                            [w, &watchdog](protocol::Payload p) {
                              if (std::holds_alternative<protocol::Step>(p)) watchdog.kick();
                              w->write_payload(std::move(p));
                            },
                            comm.get(), switches);
    if (!switches.memory_snapshot.empty())
      trainer.set_snapshot_sink([&switches, rank, &hello, &cfg](const metrics::AllocatorSnapshot& snapshot,
                                                                const protocol::MemoryCategories& categories,
                                                                int64_t step, int64_t allocated, int64_t reserved) {
        telemetry::SnapshotMeta meta;
        meta.device = hello.device;
        meta.phase = categories.phase;
        meta.step = step;
        meta.note = cfg.model + " " + std::string(config::to_string(cfg.strategy)) + ", micro_batch " +
                    std::to_string(cfg.micro_batch) + ", seq_len " + std::to_string(cfg.seq_len);
        meta.allocated_bytes = allocated;
        meta.reserved_bytes = reserved;
        dump_snapshot(switches.memory_snapshot, rank, snapshot, meta);
      });
    const protocol::Summary summary = trainer.run();
    sampler.stop();
    if (!options.save_params.empty()) {
      const at::Tensor flat = trainer.full_parameters().contiguous();
      if (rank == 0) {
        std::ofstream out(options.save_params, std::ios::binary);
        out.write(static_cast<const char*>(flat.data_ptr()), flat.numel() * static_cast<std::streamsize>(sizeof(float)));
        if (!out) throw engine::EngineError("io", protocol::kExitInternal, "cannot write " + options.save_params);
      }
    }
    protocol::Done done;
    done.exit_code = protocol::kExitOk;
    done.summary = summary;
    writer->write_payload(done);
    char median[32];  // "1703.3 ms", not std::to_string's "1703.303000"
    std::snprintf(median, sizeof(median), "%.1f", summary.step_ms_median);
    log(rank, std::string("done: median step ") + median + " ms");
    if (!writer->ok()) log(rank, "some events could not be written (the reader went away)");
    return protocol::kExitOk;
  } catch (const engine::EngineError& e) {
    return fail(writer.get(), rank, e.kind(), e.exit_code(), e.what(), e.details());
  } catch (const c10::OutOfMemoryError& e) {
    nlohmann::json d = memory_details(device.get());
    d["requested_bytes"] = requested_bytes(e.what_without_backtrace());
    add_oom_record(d, switches.memory_snapshot, rank, device ? device->name() : "");
    return fail(writer.get(), rank, "oom", protocol::kExitOutOfMemory,
                oom_message(device.get(), d["requested_bytes"].get<int64_t>(), e.what_without_backtrace()), d);
  } catch (const std::bad_alloc&) {
    return fail(writer.get(), rank, "oom", protocol::kExitOutOfMemory, "host memory exhausted (std::bad_alloc)",
                memory_details(device.get()));
  } catch (const c10::Error& e) {
    const std::string msg = e.what_without_backtrace();
    if (is_out_of_memory(msg)) {
      nlohmann::json d = memory_details(device.get());
      d["requested_bytes"] = requested_bytes(msg);
      add_oom_record(d, switches.memory_snapshot, rank, device ? device->name() : "");
      return fail(writer.get(), rank, "oom", protocol::kExitOutOfMemory,
                  oom_message(device.get(), d["requested_bytes"].get<int64_t>(), msg), d);
    }
    return fail(writer.get(), rank, "crash", protocol::kExitInternal, "libtorch error: " + msg);
  } catch (const std::exception& e) {
    return fail(writer.get(), rank, "crash", protocol::kExitInternal, e.what());
  }
}

}  // namespace tunebench::worker
