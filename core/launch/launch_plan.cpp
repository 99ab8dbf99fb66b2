// The launch plans of the three launchers (see launch_plan.h). Everything that reaches a shell
// on another machine goes through shell_quote; validate() has already refused control characters.
#include "core/launch/launch_plan.h"

#include "core/config/script.h"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <locale>
#include <sstream>
#include <stdexcept>

namespace tunebench::launch {

namespace {

using config::Launcher;
using config::SlurmMode;
using config::TrialConfig;

constexpr std::string_view kRankExit = "@tunebench rank-exit ";
constexpr const char* kTokenVariable = "TUNEBENCH_EVENT_TOKEN";

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A path on the remote side: "~/x" expands there ("$HOME"/'x'); anything else is quoted.
std::string remote_path(const std::string& path) {
  if (path.rfind("~/", 0) == 0) return "\"$HOME\"/" + shell_quote(path.substr(2));
  return shell_quote(path);
}

std::string master_addr(const TrialConfig& c) {
  if (!c.master_addr.empty()) return c.master_addr;
  return c.ssh_hosts.empty() ? std::string("127.0.0.1") : c.ssh_hosts.front().host;
}

std::string where(const config::SshHost& h) {
  std::string s = h.user.empty() ? h.host : h.user + "@" + h.host;
  if (h.port) s += ":" + std::to_string(h.port);
  return s;
}

// Variables every remote rank gets (ssh: exported by the node script; slurm: srun's environment).
std::map<std::string, std::string> remote_common_env(const TrialConfig& c, const LaunchContext& ctx) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : c.nccl_env) env[k] = v;
  for (const auto& [k, v] : c.remote_env) env[k] = v;
  env["MASTER_PORT"] = std::to_string(ctx.master_port);
  env["TUNEBENCH_TRIAL"] = ctx.trial_id;
  return env;
}

// The remote command that runs a rank, up to its common arguments: the worker, or the script's
// interpreter with tunebench_probe.
std::string remote_program(const TrialConfig& c, const LaunchContext& ctx, const std::string& worker) {
  if (!runs_script(c, ctx)) return remote_path(worker);
  return remote_path(c.python.empty() ? std::string("python3") : c.python) + " -m tunebench_probe";
}

// Before it, for a script: tunebench_probe found beside the remote worker's install
// (PREFIX/bin/tunebench-worker -> PREFIX/share/tunebench/python), first on PYTHONPATH.
std::string remote_probe_export(const TrialConfig& c, const LaunchContext& ctx, const std::string& worker) {
  if (!runs_script(c, ctx)) return "";
  return "PYTHONPATH=\"$(dirname \"$(dirname \"$(command -v " + remote_path(worker) +
         ")\")\")/share/tunebench/python${PYTHONPATH:+:$PYTHONPATH}\"; export PYTHONPATH; ";
}

// What a rank runs after --trial: the link probe's arguments, or the script and its arguments.
std::vector<std::string> rank_tail(const TrialConfig& c, const LaunchContext& ctx) {
  if (runs_script(c, ctx)) return script_arguments(c);
  return worker_mode_arguments(ctx);
}

std::vector<std::string> slurm_resources(const TrialConfig& c) {
  std::vector<std::string> out = {"--nodes=" + std::to_string(c.slurm_nodes),
                                  "--ntasks-per-node=" + std::to_string(c.world_size / std::max(1, c.slurm_nodes))};
  if (c.slurm_gpus_per_node > 0) out.push_back("--gpus-per-node=" + std::to_string(c.slurm_gpus_per_node));
  if (!c.slurm_partition.empty()) out.push_back("--partition=" + c.slurm_partition);
  if (!c.slurm_account.empty()) out.push_back("--account=" + c.slurm_account);
  if (!c.slurm_time.empty()) out.push_back("--time=" + c.slurm_time);
  return out;
}

std::string slurm_base_name(const LaunchContext& ctx) {
  std::string id;
  for (char ch : ctx.trial_id) id += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' ? ch : '_';
  return "tunebench-" + id + "-" + ctx.nonce;
}

// What each SLURM task runs: MASTER_ADDR is the step's first node, then the worker, which reads
// SLURM's rank variables itself. A script's init_process_group (env://) and the probe read
// torchrun's, so a script's task sets them from SLURM's first.
std::string slurm_task_command(const TrialConfig& c, const LaunchContext& ctx, const std::string& config_path) {
  auto args = worker_arguments(config_path, "tcp://" + ctx.tcp_events, ctx.trial_id);
  for (auto& a : rank_tail(c, ctx)) args.push_back(std::move(a));
  std::string torchrun_env;
  if (runs_script(c, ctx))
    torchrun_env = "RANK=$SLURM_PROCID; WORLD_SIZE=$SLURM_NTASKS; LOCAL_RANK=$SLURM_LOCALID; NODE_RANK=$SLURM_NODEID; "
                   "LOCAL_WORLD_SIZE=" + std::to_string(c.world_size / std::max(1, c.slurm_nodes)) +
                   "; export RANK WORLD_SIZE LOCAL_RANK NODE_RANK LOCAL_WORLD_SIZE; ";
  return "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_STEP_NODELIST\" | head -n 1); export MASTER_ADDR; " +
         torchrun_env + remote_probe_export(c, ctx, c.remote_worker) + "exec " +
         remote_program(c, ctx, c.remote_worker) + " " + shell_join(args);
}

// A number as the worker's option parser reads it, without trailing zeros ("0.25", "1024").
std::string plain_number(double v) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s << std::setprecision(10) << v;
  return s.str();
}

}  // namespace

std::string LaunchProcess::label() const {
  switch (kind) {
    case Kind::Rank: return "rank " + std::to_string(ranks.empty() ? -1 : ranks.front());
    case Kind::SshNode: return "node " + std::to_string(node) + " (" + where + ")";
    case Kind::SlurmStep: return "srun";
    case Kind::SlurmBatch: return "sbatch";
  }
  return "?";
}

std::string shell_quote(std::string_view word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (char ch : word)
    plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("@%+=:,./_-").find(ch) !=
                                                                            std::string_view::npos);
  if (plain) return std::string(word);
  std::string out = "'";
  for (char ch : word) {
    if (ch == '\'')
      out += "'\\''";
    else
      out += ch;
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

std::string worker_command_line(const TrialConfig& config, const std::string& worker) {
  const TrialConfig defaults;
  if (config::is_script(config)) {
    // A script runs through the command line's --script (the probe reads its knobs from the config).
    std::string line = "tunebench-cli run SESSION.tbsession --script " + shell_quote(config.script);
    if (!config.python.empty()) line += " --python " + shell_quote(config.python);
    if (config.world_size > 1) line += " --nproc " + std::to_string(config.world_size);
    // The run length, what is applied and what the arguments name; the timeout when not the default.
    std::vector<std::string> keys = {"steps", "warmup"};
    for (const auto& k : config.script_knobs) keys.push_back(k);
    for (const auto& k : config::template_keys(config.script_args))
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    if (config.step_timeout_s != defaults.step_timeout_s) keys.emplace_back("step_timeout_s");
    for (const auto& k : keys) line += " --set " + shell_quote(k + "=" + config::knob_text(config, k));
    if (!config.nccl_env.empty()) line += " --set " + shell_quote("nccl_env=" + config::knob_text(config, "nccl_env"));
    if (!config.script_args.empty()) line += " -- " + config.script_args;
    return line;
  }
  std::string line;
  if (config.world_size > 1)
    line = "torchrun --standalone --nproc-per-node " + std::to_string(config.world_size) + " --no-python ";
  line += shell_quote(worker);
  for (const auto& k : config::knobs()) {
    if (k.key == "name" || k.group == "Your script") continue;
    const auto v = config::knob_text(config, k.key);
    if (v == config::knob_text(defaults, k.key)) continue;
    std::string flag = k.key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    line += " --" + flag + " " + shell_quote(v);
  }
  return line;
}

std::vector<std::string> worker_arguments(const std::string& config_path, const std::string& events_spec,
                                          const std::string& trial_id) {
  return {"--config", config_path, "--events", events_spec, "--trial", trial_id};
}

std::vector<std::string> worker_mode_arguments(const LaunchContext& ctx) {
  if (!ctx.link_probe) return {};
  return {"--probe-link", "--probe-min-mb", plain_number(ctx.link_probe->min_mb), "--probe-max-mb",
          plain_number(ctx.link_probe->max_mb)};
}

bool runs_script(const TrialConfig& config, const LaunchContext& context) {
  return config::is_script(config) && !context.link_probe;
}

std::vector<std::string> script_arguments(const TrialConfig& config) {
  std::vector<std::string> out = {"--", config.script};
  for (auto& a : config::script_argv(config)) out.push_back(std::move(a));
  return out;
}

std::map<std::string, std::string> local_rank_env(const TrialConfig& c, int rank, int master_port,
                                                  const std::string& trial_id) {
  std::map<std::string, std::string> env;
  // All ranks run on this host, so the local rank is the rank (one GPU per rank on CUDA).
  env["RANK"] = std::to_string(rank);
  env["WORLD_SIZE"] = std::to_string(c.world_size);
  env["LOCAL_RANK"] = std::to_string(rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(c.world_size);
  env["NODE_RANK"] = "0";
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(master_port);
  env["TUNEBENCH_TRIAL"] = trial_id;
  for (const auto& [name, value] : c.nccl_env) env[name] = value;
  return env;
}

std::string remote_socket_path(const LaunchContext& ctx, int node) {
  return "/tmp/tunebench-" + ctx.nonce + "-" + std::to_string(node) + ".sock";
}

std::string ssh_node_script(const TrialConfig& c, const LaunchContext& ctx, int node) {
  const auto& host = c.ssh_hosts.at(size_t(node));
  int first = 0;
  for (int n = 0; n < node; ++n) first += c.ssh_hosts[size_t(n)].ranks;
  auto env = remote_common_env(c, ctx);
  for (const auto& [k, v] : host.env) env[k] = v;
  env["MASTER_ADDR"] = master_addr(c);
  env["WORLD_SIZE"] = std::to_string(c.world_size);
  env["NODE_RANK"] = std::to_string(node);
  env["LOCAL_WORLD_SIZE"] = std::to_string(host.ranks);
  const std::string sock = remote_socket_path(ctx, node);
  const std::string marker = "TUNEBENCH_CONFIG_" + ctx.nonce;
  const std::string worker_path = host.worker.empty() ? c.remote_worker : host.worker;
  const std::string worker = remote_probe_export(c, ctx, worker_path) + remote_program(c, ctx, worker_path);

  std::ostringstream s;
  s << "# tunebench node " << node << " of trial " << ctx.trial_id << ": ranks " << first << ".."
    << first + host.ranks - 1 << "\n";
  s << "set -u\numask 077\n";
  s << "d=$(mktemp -d \"${TMPDIR:-/tmp}/tunebench.XXXXXX\") || { echo 'tunebench: cannot create a temporary "
       "folder' >&2; exit 96; }\n";
  s << "cat > \"$d/trial.json\" <<'" << marker << "'\n" << config::to_json(c).dump() << "\n" << marker << "\n";
  // Stop and lost connections: ssh's stdin closes, so the watchdog ends this node's ranks.
  s << "exec 3<&0\n";
  s << "( trap '' TERM; cat <&3 >/dev/null; [ -d \"$d\" ] || exit 0; rm -rf \"$d\" " << sock
    << "; kill -TERM 0; sleep 3; kill -KILL 0 ) >/dev/null 2>&1 &\n";
  s << "exec 3<&-\n";
  for (const auto& [k, v] : env) s << k << "=" << shell_quote(v) << "; export " << k << "\n";
  // The forwarded socket appears when sshd has bound it.
  s << "i=0; while [ ! -S " << sock << " ] && [ \"$i\" -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n";
  std::string pids;
  for (int l = 0; l < host.ranks; ++l) {
    const int g = first + l;
    s << "( RANK=" << g << "; LOCAL_RANK=" << l << "; export RANK LOCAL_RANK; " << worker
      << " --config \"$d/trial.json\" --events " << shell_quote("unix:" + sock) << " --trial "
      << shell_quote(ctx.trial_id);
    for (const auto& a : rank_tail(c, ctx)) s << " " << shell_quote(a);
    s << " </dev/null; echo \"" << kRankExit << g << " $?\" ) &\np" << l
      << "=$!\n";
    pids += " \"$p" + std::to_string(l) + "\"";
  }
  s << "wait" << pids << "\nrm -rf \"$d\" " << sock << "\n";
  return s.str();
}

std::vector<std::string> ssh_argv(const TrialConfig& c, const LaunchContext& ctx, int node) {
  if (ctx.events_socket.empty()) throw std::invalid_argument("the ssh launcher needs the caller's event socket");
  const auto& host = c.ssh_hosts.at(size_t(node));
  std::vector<std::string> argv = split_words(c.ssh_command);
  for (const char* option :
       {"-T", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o", "ServerAliveInterval=5", "-o",
        "ServerAliveCountMax=3"})
    argv.emplace_back(option);
  if (host.port) {
    argv.emplace_back("-p");
    argv.push_back(std::to_string(host.port));
  }
  if (!host.user.empty()) {
    argv.emplace_back("-l");
    argv.push_back(host.user);
  }
  argv.emplace_back("-R");
  argv.push_back(remote_socket_path(ctx, node) + ":" + ctx.events_socket);
  argv.push_back(host.host);
  // ssh hands one string to the remote login shell; `sh -c` makes the script's shell POSIX sh.
  argv.push_back("sh -c " + shell_quote(ssh_node_script(c, ctx, node)));
  return argv;
}

std::string slurm_dir(const TrialConfig& c, const LaunchContext& ctx) {
  if (!c.slurm_dir.empty()) return c.slurm_dir;
  return (ctx.home.empty() ? std::string("/tmp") : ctx.home) + "/.cache/tunebench/slurm";
}

std::string sbatch_script(const TrialConfig& c, const LaunchContext& ctx) {
  const std::string dir = slurm_dir(c, ctx);
  const std::string base = slurm_base_name(ctx);
  std::ostringstream s;
  s << "#!/bin/sh\n";
  s << "#SBATCH --job-name=" << base << "\n";
  for (const auto& r : slurm_resources(c)) s << "#SBATCH " << r << "\n";
  s << "#SBATCH --output=" << dir << "/" << base << "-%j.out\n";
  s << "# Generated by Tunebench for trial " << ctx.trial_id << ". The ranks send their events to "
    << ctx.tcp_events << "; the event token\n# comes from the submitting environment (" << kTokenVariable
    << "), never from this file.\n";
  s << "exec srun --kill-on-bad-exit=1 sh -c " << shell_quote(slurm_task_command(c, ctx, dir + "/" + base + ".json"))
    << "\n";
  return s.str();
}

LaunchPlan plan_launch(const TrialConfig& c, const LaunchContext& ctx) {
  LaunchPlan plan;
  switch (c.launcher) {
    case Launcher::Local: {
      if (ctx.events_socket.empty()) throw std::invalid_argument("the local launcher needs an event socket");
      for (int rank = 0; rank < c.world_size; ++rank) {
        LaunchProcess p;
        p.kind = LaunchProcess::Kind::Rank;
        p.argv = {ctx.worker};
        if (runs_script(c, ctx)) {
          if (ctx.python.empty() || ctx.probe_path.empty())
            throw std::invalid_argument("a script trial needs the interpreter and tunebench_probe's folder");
          p.argv = {ctx.python, "-m", "tunebench_probe"};
        }
        for (auto& a : worker_arguments(ctx.config_path, "unix:" + ctx.events_socket, ctx.trial_id))
          p.argv.push_back(std::move(a));
        for (auto& a : rank_tail(c, ctx)) p.argv.push_back(std::move(a));
        p.env = local_rank_env(c, rank, ctx.master_port, ctx.trial_id);
        if (runs_script(c, ctx))
          p.env["PYTHONPATH"] = ctx.probe_path + (ctx.pythonpath.empty() ? "" : ":" + ctx.pythonpath);
        p.ranks = {rank};
        p.where = "this machine";
        plan.processes.push_back(std::move(p));
      }
      break;
    }
    case Launcher::Ssh: {
      int first = 0;
      for (size_t node = 0; node < c.ssh_hosts.size(); ++node) {
        LaunchProcess p;
        p.kind = LaunchProcess::Kind::SshNode;
        p.argv = ssh_argv(c, ctx, int(node));
        for (int l = 0; l < c.ssh_hosts[node].ranks; ++l) p.ranks.push_back(first + l);
        first += c.ssh_hosts[node].ranks;
        p.node = int(node);
        p.where = where(c.ssh_hosts[node]);
        p.stop_by_closing_stdin = true;
        plan.processes.push_back(std::move(p));
      }
      break;
    }
    case Launcher::Slurm: {
      if (ctx.tcp_events.empty()) throw std::invalid_argument("the slurm launcher needs the caller's TCP address");
      const std::string dir = slurm_dir(c, ctx);
      const std::string base = slurm_base_name(ctx);
      const std::string config_path = dir + "/" + base + ".json";
      plan.files.emplace_back(config_path, config::to_json(c).dump(2) + "\n");
      plan.tcp_events = true;
      LaunchProcess p;
      p.env = remote_common_env(c, ctx);
      if (!ctx.token.empty()) p.env[kTokenVariable] = ctx.token;
      for (int r = 0; r < c.world_size; ++r) p.ranks.push_back(r);
      p.where = "SLURM";
      if (c.slurm_mode == SlurmMode::Srun) {
        p.kind = LaunchProcess::Kind::SlurmStep;
        p.argv = {"srun", "--job-name=" + base};
        for (auto& r : slurm_resources(c)) p.argv.push_back(std::move(r));
        p.argv.push_back("--kill-on-bad-exit=1");
        p.argv.push_back("sh");
        p.argv.push_back("-c");
        p.argv.push_back(slurm_task_command(c, ctx, config_path));
      } else {
        p.kind = LaunchProcess::Kind::SlurmBatch;
        const std::string script = dir + "/" + base + ".sbatch";
        plan.files.emplace_back(script, sbatch_script(c, ctx));
        p.argv = {"sbatch", "--parsable", "--wait", script};
      }
      plan.processes.push_back(std::move(p));
      break;
    }
  }
  return plan;
}

std::string LaunchPlan::preview() const {
  std::ostringstream s;
  for (const auto& [path, text] : files) s << "# writes " << path << " (" << text.size() << " bytes)\n";
  for (const auto& p : processes) {
    s << "# " << p.label() << " on " << p.where << "\n";
    for (const auto& [k, v] : p.env) s << k << "=" << (k == kTokenVariable ? "<token>" : shell_quote(v)) << " ";
    s << shell_join(p.argv) << "\n";
  }
  return s.str();
}

std::optional<std::pair<int, int>> parse_rank_exit(std::string_view line) {
  const auto at = line.find(kRankExit);
  if (at == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(line.substr(at + kRankExit.size())));
  int rank = -1, code = -1;
  std::string rest;
  if (!(in >> rank >> code) || rank < 0 || code < 0 || (in >> rest)) return std::nullopt;
  return std::make_pair(rank, code);
}

std::optional<std::string> parse_sbatch_job_id(std::string_view line) {
  const std::string_view id = line.substr(0, line.find(';'));
  if (id.empty() || id.size() > 20) return std::nullopt;
  for (char ch : id)
    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '_') return std::nullopt;
  return std::string(id);
}

std::vector<std::string> scancel_argv(const std::string& job_id) { return {"scancel", job_id}; }

}  // namespace tunebench::launch
