// `tunebench-cli run` and `sweep`: headless trials written live into a session, through
// launch::run_trial (the same runner other code calls). Argument wiring, the progress display
// and Ctrl-C only.
//
//   tunebench-cli run my.tbsession --preset cpu-tiny --set world_size=2 --set strategy=ddp
//   tunebench-cli run my.tbsession --config t.json --launcher ssh --hosts "gpu1 ranks=2; gpu2 ranks=2"
//   tunebench-cli sweep my.tbsession --preset cpu-tiny --grid micro_batch=2,4 --grid num_workers=0,2 --repeat 2
//   tunebench-cli run my.tbsession --script train.py --nproc 2 --set num_workers=4 -- --epochs 1
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/config_inputs.h"
#include "core/analysis/diagnosis.h"
#include "core/analysis/format.h"
#include "core/analysis/sweep.h"
#include "core/analysis/trial_metrics.h"
#include "core/launch/headless_run.h"
#include "core/store/session_store.h"

namespace tunebench::cli {

namespace {

std::atomic<int> g_interrupts{0};
extern "C" void on_interrupt(int) { g_interrupts.fetch_add(1); }

struct RunOptions {
  std::string session, preset, config_file, hf_config, worker, name, launcher, hosts, ssh, partition, account,
      time_limit;
  std::vector<std::string> sets, grid, tags;
  ScriptInputs script;
  int nodes = 0, repeat = 1;
  bool json = false, sbatch = false;
  double timeout_s = 0;
};

config::TrialConfig base_config(const RunOptions& o) {
  // The launcher flags are --set changes by another name; the user's own --set come after them.
  std::vector<std::string> sets;
  if (!o.launcher.empty()) sets.push_back("launcher=" + o.launcher);
  if (!o.hosts.empty()) sets.push_back("ssh_hosts=" + o.hosts);
  if (!o.ssh.empty()) sets.push_back("ssh_command=" + o.ssh);
  if (o.nodes > 0) sets.push_back("slurm_nodes=" + std::to_string(o.nodes));
  if (o.sbatch) sets.push_back("slurm_mode=sbatch");
  if (!o.partition.empty()) sets.push_back("slurm_partition=" + o.partition);
  if (!o.account.empty()) sets.push_back("slurm_account=" + o.account);
  if (!o.time_limit.empty()) sets.push_back("slurm_time=" + o.time_limit);
  sets.insert(sets.end(), o.sets.begin(), o.sets.end());
  return config_from_inputs(o.preset, o.config_file, sets, o.hf_config, o.script);
}

// Progress on a terminal: one line redrawn in place; otherwise a plain line per 10 % of the steps.
class ProgressDisplay {
 public:
  ProgressDisplay(std::string label, bool json) : m_label(std::move(label)), m_tty(!json && ::isatty(2)) {}
  void update(const launch::Progress& p) {
    if (p.steps <= 0) return;
    char timing[96] = "";
    if (p.ms_per_step > 0)
      std::snprintf(timing, sizeof(timing), "  %.1f ms/step  ETA %.0f s", p.ms_per_step, std::ceil(p.eta_s));
    if (m_tty) {
      const int width = 30;
      const int filled = std::min(width, p.step * width / p.steps);
      std::fprintf(stderr, "\r%s [%s%s] step %d of %d%s\033[K", m_label.c_str(), std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), p.step, p.steps, timing);
      std::fflush(stderr);
      m_drawn = true;
    } else {
      const int decile = p.step * 10 / p.steps;
      if (decile == m_last_decile && p.step != p.steps) return;
      m_last_decile = decile;
      std::fprintf(stderr, "%s: step %d of %d%s\n", m_label.c_str(), p.step, p.steps, timing);
    }
  }
  void end() {
    if (m_drawn) std::fprintf(stderr, "\n");
    m_drawn = false;
  }

 private:
  std::string m_label;
  bool m_tty;
  bool m_drawn = false;
  int m_last_decile = -1;
};

nlohmann::json result_json(const launch::HeadlessResult& r, const std::string& name) {
  return {{"trial_id", r.trial_id},
          {"name", name},
          {"status", protocol::to_string(r.end.status)},
          {"exit_code", r.end.exit_code},
          {"message", r.message}};
}

launch::HeadlessResult run_one(const RunOptions& o, const config::TrialConfig& c, const std::string& name,
                               const std::string& source, const std::vector<std::string>& tags,
                               const std::string& label) {
  ProgressDisplay display(label, o.json);
  launch::HeadlessRequest request;
  request.session_path = o.session;
  request.config = c;
  request.name = name;
  request.source = source;
  request.tags = tags;
  request.worker = o.worker;
  request.timeout_s = o.timeout_s;
  request.on_progress = [&display](const launch::Progress& p) { display.update(p); };
  request.cancelled = [] { return g_interrupts.load() > 0; };
  auto result = launch::run_trial(request);
  display.end();
  if (!o.json) {
    if (result.trial_id <= 0)  // refused before anything ran: no trial to name
      std::fprintf(stderr, "%s: not run: %s\n", label.c_str(), result.message.c_str());
    else
      std::fprintf(stderr, "%s: trial %lld %s%s%s\n", label.c_str(), static_cast<long long>(result.trial_id),
                   std::string(protocol::to_string(result.end.status)).c_str(), result.message.empty() ? "" : ": ",
                   result.message.c_str());
  }
  return result;
}

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

// What the trial measured, as the comparison and the report say it: the median step (slowest rank),
// the throughput and the diagnosis's first finding. Empty figures when it recorded no step.
struct Outcome {
  std::optional<double> step_ms, tokens_per_s;
  std::optional<double> samples_per_s;  // a model counted in samples (a script's images): throughput.h
  std::string finding;
};

Outcome measured_outcome(const std::string& session_path, int64_t trial_id) {
  Outcome out;
  if (trial_id <= 0) return out;
  const auto session = store::SessionStore::open(session_path, {store::SessionStore::Mode::ReadOnly});
  const auto metrics = analysis::analyze(session.load_trial(trial_id).log);
  if (metrics.measured_steps == 0) return out;
  out.step_ms = metrics.step_ms.median;
  if (!metrics.tokens_per_s_total.empty()) out.tokens_per_s = metrics.tokens_per_s_total.median;
  if (!metrics.samples_per_s_total.empty()) out.samples_per_s = metrics.samples_per_s_total.median;
  const auto diagnosis = analysis::diagnose(metrics);
  if (!diagnosis.findings.empty()) out.finding = diagnosis.findings.front().title;
  return out;
}

void run_run(const RunOptions& o) {
  const config::TrialConfig c = base_config(o);
  install_interrupt_handler();
  const std::string name = !o.name.empty() ? o.name : !c.name.empty() ? c.name : (o.preset.empty() ? "cli run" : o.preset);
  const auto result = run_one(o, c, name, "cli run", o.tags, name);
  const Outcome outcome = measured_outcome(o.session, result.trial_id);
  if (o.json) {
    auto j = result_json(result, name);
    j["step_ms"] = outcome.step_ms ? nlohmann::json(*outcome.step_ms) : nlohmann::json();
    j["tokens_per_s"] = outcome.tokens_per_s ? nlohmann::json(*outcome.tokens_per_s) : nlohmann::json();
    j["samples_per_s"] = outcome.samples_per_s ? nlohmann::json(*outcome.samples_per_s) : nlohmann::json();
    j["finding"] = outcome.finding;
    std::cout << j.dump(2) << "\n";
  } else if (outcome.step_ms) {
    // The figure the run was for, on stdout: one line a script can keep.
    // In tokens/s, or samples/s for a model counted in samples (the trials table's rule).
    const std::string rate = outcome.tokens_per_s ? analysis::format_count(*outcome.tokens_per_s) + " tokens/s"
                             : outcome.samples_per_s ? analysis::format_count(*outcome.samples_per_s) + " samples/s"
                                                     : std::string("unknown tokens/s");
    std::printf("trial %lld: median step %s ms, %s%s%s\n", static_cast<long long>(result.trial_id),
                analysis::format_fixed(*outcome.step_ms, 1).c_str(), rate.c_str(),
                outcome.finding.empty() ? "" : "; ", outcome.finding.c_str());
  }
  if (result.end.exit_code != 0) throw CommandExit{result.end.exit_code};
}

void run_sweep(const RunOptions& o) {
  analysis::SweepSpec spec;
  spec.base = base_config(o);
  spec.repeats = o.repeat;
  for (const auto& g : o.grid) {
    const auto eq = g.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--grid wants KEY=V1,V2,..., got '" + g + "'");
    analysis::SweepAxis axis{g.substr(0, eq), {}};
    std::string values = g.substr(eq + 1), v;
    std::stringstream ss(values);
    while (std::getline(ss, v, ',')) axis.values.push_back(v);
    spec.axes.push_back(std::move(axis));
  }
  if (!o.name.empty()) spec.base.name = o.name;
  else if (spec.base.name.empty()) spec.base.name = o.preset.empty() ? "sweep" : o.preset;
  const auto plan = analysis::plan_sweep(spec);
  if (!plan.spec_problems.empty()) throw std::runtime_error(config::describe(plan.spec_problems));
  for (const auto& bad : plan.invalid) {
    std::string point;
    for (size_t i = 0; i < bad.values.size(); ++i) point += (i ? ", " : "") + spec.axes[i].key + "=" + bad.values[i];
    std::cerr << "skipping invalid point " << point << ": " << config::describe(bad.problems);
  }
  if (plan.trials.empty()) throw std::runtime_error("the sweep has no valid point");
  install_interrupt_handler();
  // The trials of one sweep share a tag, so the session groups them (as the GUI's sweeps).
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::vector<std::string> tags = o.tags;
  tags.push_back(std::string("sweep ") + stamp);
  nlohmann::json results = nlohmann::json::array();
  int failed = 0, worst = 0;
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    if (g_interrupts.load() > 0) break;
    const auto& point = plan.trials[i];
    const std::string label = "[" + std::to_string(i + 1) + "/" + std::to_string(plan.trials.size()) + "] " + point.config.name;
    const auto r = run_one(o, point.config, point.config.name, "cli sweep", tags, label);
    results.push_back(result_json(r, point.config.name));
    if (r.end.exit_code != 0) {
      ++failed;
      if (worst == 0) worst = r.end.exit_code;
    }
  }
  const bool interrupted = g_interrupts.load() > 0;
  if (o.json)
    std::cout << nlohmann::json{{"trials", results}, {"failed", failed}, {"interrupted", interrupted},
                                {"tag", tags.back()}}
                     .dump(2)
              << "\n";
  else
    std::fprintf(stderr, "sweep: %zu trial(s) run, %d failed%s; tag '%s'\n", results.size(), failed,
                 interrupted ? ", interrupted" : "", tags.back().c_str());
  if (interrupted) throw CommandExit{130};
  if (failed) throw CommandExit{worst};
}

void add_common(CLI::App* cmd, RunOptions* o) {
  cmd->add_option("session", o->session, "Session file (.tbsession), created when missing")->required();
  auto* preset = cmd->add_option("--preset", o->preset, "Start from a trial preset (cpu-tiny, 7b-ddp, ...)");
  auto* config = cmd->add_option("--config", o->config_file, "Trial configuration JSON");
  preset->excludes(config);
  cmd->add_option("--hf-config", o->hf_config, kHfConfigHelp);
  cmd->add_option("--set", o->sets, "Change a knob: KEY=VALUE (repeatable), e.g. --set world_size=2");
  cmd->add_option("--launcher", o->launcher, "Where the ranks run: local | ssh | slurm")
      ->check(CLI::IsMember({"local", "ssh", "slurm"}));
  cmd->add_option("--hosts", o->hosts, "ssh: \"[user@]host[:port] ranks=N [worker=PATH] [NAME=value]; ...\"");
  cmd->add_option("--ssh", o->ssh, "ssh: the client and its options (default: ssh)");
  cmd->add_option("--nodes", o->nodes, "slurm: nodes");
  cmd->add_flag("--sbatch", o->sbatch, "slurm: submit a batch script (default: srun inside your allocation)");
  cmd->add_option("--partition", o->partition, "slurm: --partition");
  cmd->add_option("--account", o->account, "slurm: --account");
  cmd->add_option("--time", o->time_limit, "slurm: --time limit");
  cmd->add_option("--worker", o->worker, "Local worker program (default: beside this program, or TUNEBENCH_WORKER)");
  cmd->add_option("--name", o->name, "Trial name (sweeps: the base of every trial's name)");
  cmd->add_option("--tag", o->tags, "Tag stored with the trial (repeatable)");
  cmd->add_option("--timeout", o->timeout_s, "Stop a trial after this many seconds and mark it failed");
  cmd->add_flag("--json", o->json, "Print a JSON summary at the end (progress stays on stderr)");
  add_script_options(cmd, &o->script);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Run one trial (local, ssh or slurm) and record it live in a session, as the GUI does; exit code from "
             "the trial (130 when stopped with Ctrl-C, 124 on --timeout)");
  add_common(cmd, o.get());
  cmd->callback([o] { run_run(*o); });
}

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("sweep", "Run a grid of trials one after another into a session (tagged as one sweep)");
  add_common(cmd, o.get());
  cmd->add_option("--grid", o->grid, "An axis: KEY=V1,V2,... (repeatable; the last varies fastest)")->required();
  cmd->add_option("--repeat", o->repeat, "Run every point this many times")->check(CLI::PositiveNumber);
  cmd->callback([o] { run_sweep(*o); });
}

}  // namespace tunebench::cli
