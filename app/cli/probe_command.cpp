// `tunebench-cli probe`: run the link probe on this machine (tunebench-worker --probe-link on N
// ranks), print the all-reduce bus bandwidth per size, and with --session store it as a trial, so
// that `tunebench-cli predict --evidence SESSION` and the GUI use it for this machine's link.
//
//   tunebench-cli probe --gpus 2 [--nccl-env NCCL_P2P_DISABLE=1] [--session my.tbsession]
//   tunebench-cli probe --gpus 2 --device cpu --max-mb 16     # Gloo between CPU processes
//
// The ranks start as every trial's do (core/launch: launch::run_trial, the launch plan with the
// probe's arguments), and the trial's config and name are launch::link_probe_config's.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "core/launch/headless_run.h"
#include "core/launch/link_probe.h"
#include "core/store/session_store.h"

namespace tunebench::cli {

namespace {

struct ProbeOptions {
  int gpus = 2;
  std::string device = "cuda", worker, session;
  std::vector<std::string> nccl_env;
  double min_mb = 1, max_mb = 1024, timeout_s = 600;
};

// The probe is a trial like any other: launch::run_trial starts its ranks through the launch
// plan (the GUI's "Measure the link…" goes the same way) and writes it into a session; without
// --session, into a temporary one that is removed after the points are printed.
void run_probe(const ProbeOptions& o) {
  config::TrialConfig ranks;
  ranks.world_size = o.gpus;
  if (auto p = config::set_knob(ranks, "device", o.device)) throw std::runtime_error(p->message);
  for (const auto& kv : o.nccl_env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--nccl-env takes NAME=value, not '" + kv + "'");
    ranks.nccl_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const config::TrialConfig probe = launch::link_probe_config(ranks);

  // Without --session, a scratch session removed however this ends.
  struct Scratch {
    std::filesystem::path dir;
    ~Scratch() {
      std::error_code ignored;
      if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
    }
  } scratch;
  std::string session = o.session;
  if (session.empty()) {
    scratch.dir = std::filesystem::temp_directory_path() / ("tunebench-probe-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch.dir);
    session = (scratch.dir / "probe.tbsession").string();
  } else if (!std::filesystem::exists(session)) {
    store::SessionStore::create(session, "Link probes");
  }
  launch::HeadlessRequest request;
  request.session_path = session;
  request.config = probe;
  request.name = probe.name;
  request.source = "cli probe";
  request.worker = o.worker;
  request.timeout_s = o.timeout_s;
  request.link_probe = launch::LinkProbeRange{o.min_mb, o.max_mb};
  std::cerr << "probing on " << o.gpus << " ranks (" << probe.name << ")\n";
  const auto result = launch::run_trial(request);
  if (result.end.status != protocol::TrialStatus::Done) {
    throw std::runtime_error(result.message.empty() ? "the probe " + std::string(protocol::to_string(result.end.status))
                                                    : result.message);
  }
  const auto stored = store::SessionStore::open(session, {store::SessionStore::Mode::ReadOnly});
  const auto log = stored.load_trial(result.trial_id).log;
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
  if (!o.session.empty())
    std::cout << "stored as trial " << result.trial_id << " of " << o.session << "\n";
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
  // Failures reach main(): one prefix ("tunebench-cli: ") and one status per mistake.
  cmd->callback([o] { run_probe(*o); });
}

}  // namespace tunebench::cli
