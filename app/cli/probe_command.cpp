// `tunebench-cli probe`: run the link probe on this machine (tunebench-worker --probe-link on N
// ranks), print the all-reduce bus bandwidth per size, and with --session store it as a trial, so
// that `tunebench-cli predict --evidence SESSION` and the GUI use it for this machine's link.
//
//   tunebench-cli probe --gpus 2 [--nccl-env NCCL_P2P_DISABLE=1] [--session my.tbsession]
//   tunebench-cli probe --gpus 2 --device cpu --max-mb 16     # Gloo between CPU processes
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/rank_launcher.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"

namespace tunebench::cli {

namespace {

struct ProbeOptions {
  int gpus = 2;
  std::string device = "cuda", worker, session;
  std::vector<std::string> nccl_env;
  double min_mb = 1, max_mb = 1024, timeout_s = 600;
};

void run_probe(const ProbeOptions& o) {
  const std::string worker = find_worker(o.worker);
  const auto dir = std::filesystem::temp_directory_path() / ("tunebench-probe-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> args = {
      "--probe-link",          "--device", o.device, "--probe-min-mb", std::to_string(o.min_mb), "--probe-max-mb",
      std::to_string(o.max_mb)};
  for (const auto& kv : o.nccl_env) {
    args.push_back("--nccl-env");
    args.push_back(kv);
  }
  std::string name = "link probe, " + std::to_string(o.gpus) + " x " + o.device;
  for (const auto& kv : o.nccl_env) name += ", " + kv;
  std::cerr << "probing with " << worker << " on " << o.gpus << " ranks (logs in " << dir.string() << ")\n";
  auto ranks = launch_ranks(worker, o.gpus, args, "probe", dir.string());
  const bool finished = wait_ranks(ranks, o.timeout_s);
  // One log holding every rank's events: what a headless run's file: logs concatenated look like.
  const auto merged = dir / "probe.jsonl";
  {
    std::ofstream out(merged);
    for (const auto& r : ranks) out << std::ifstream(r.events_path).rdbuf();
  }
  for (const auto& r : ranks)
    if (r.exit_code != 0) {
      std::ifstream err(r.stderr_path);
      std::string line, last;
      while (std::getline(err, line)) last = line;
      throw std::runtime_error("rank " + std::to_string(&r - &ranks[0]) + " " +
                               (finished ? "exited with " + std::to_string(r.exit_code) : std::string("timed out")) +
                               (last.empty() ? "" : ": " + last) + " (see " + r.stderr_path + ")");
    }
  const auto log = protocol::read_trial_log_file(merged.string());
  const auto it = log.ranks.find(0);
  if (it == log.ranks.end() || it->second.probes.empty()) throw std::runtime_error("the probe reported no point");
  std::cout << "all-reduce bus bandwidth (nccl-tests definition), " << o.gpus << " ranks"
            << (it->second.hello ? ", " + it->second.hello->device : std::string()) << "\n";
  std::cout << "        bytes      time us   algbw GB/s   busbw GB/s\n";
  for (const auto& p : it->second.probes) {
    char line[128];
    std::snprintf(line, sizeof(line), "%13lld %12.1f %12.2f %12.2f\n", static_cast<long long>(p.bytes), p.time_us,
                  p.algbw_gbps, p.busbw_gbps);
    std::cout << line;
  }
  if (!o.session.empty()) {
    auto store = std::filesystem::exists(o.session) ? store::SessionStore::open(o.session)
                                                    : store::SessionStore::create(o.session, "Link probes");
    const auto result = store::import_event_log(store, merged.string(), name);
    std::cout << "stored as trial " << result.trial_id << " of " << o.session << "\n";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand("probe", "Measure all-reduce bus bandwidth between this machine's GPUs (link probe)");
  cmd->add_option("--gpus", o->gpus, "Ranks (one GPU each)")->check(CLI::Range(2, 1024));
  cmd->add_option("--device", o->device, "cuda, or cpu for Gloo between CPU processes")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_option("--nccl-env", o->nccl_env, "NCCL variable for the ranks, e.g. NCCL_P2P_DISABLE=1 (repeatable)");
  cmd->add_option("--min-mb", o->min_mb, "Smallest all-reduce [MiB]");
  cmd->add_option("--max-mb", o->max_mb, "Largest all-reduce [MiB]");
  cmd->add_option("--session", o->session, "Store the probe in this session (created when missing)");
  cmd->add_option("--worker", o->worker, "tunebench-worker to run (default: beside this program, or TUNEBENCH_WORKER)");
  cmd->add_option("--timeout", o->timeout_s, "Seconds before the ranks are stopped");
  cmd->callback([o] {
    try {
      run_probe(*o);
    } catch (const CLI::Error&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << "probe: " << e.what() << "\n";
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace tunebench::cli
