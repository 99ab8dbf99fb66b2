// How a trial's ranks are started: the one definition, used by the GUI's TrialRunner, the CLI's
// `run`/`sweep`/`probe` and their tests. Pure functions: they build command lines, environments,
// the remote node script and the sbatch script, and start nothing (so every byte is unit-tested
// and the launch preview shows exactly what will run).
//
//   local  one process per rank: WORKER --config C --events unix:S --trial ID, torchrun-style env
//          (a link probe adds --probe-link --probe-min-mb X --probe-max-mb Y, for every launcher);
//          a script trial (config::is_script) runs PYTHON -m tunebench_probe with the same
//          arguments, then -- SCRIPT ARGS..., with the probe's folder on PYTHONPATH (every launcher)
//   ssh    one `ssh -R remote.sock:S host sh -c SCRIPT` per host; SCRIPT writes the config,
//          starts that host's ranks, reports each rank's exit on stdout ("@tunebench rank-exit R C")
//          and ends them when the ssh connection's stdin closes (Stop, or a lost connection)
//   slurm  `srun ... sh -c WRAPPER` (inside an allocation) or `sbatch --wait SCRIPT`; ranks send
//          their events over TCP to the caller, presenting the trial's token first
// Not here: spawning, listening, supervising (TrialRunner in the GUI, run_trial headless).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::launch {

// A link probe instead of training (tunebench-worker --probe-link): all-reduces from min_mb
// doubling to max_mb between the trial's ranks (core/launch/link_probe.h).
struct LinkProbeRange {
  double min_mb = 1.0;
  double max_mb = 1024.0;
};

// What the caller prepared before planning.
struct LaunchContext {
  std::string trial_id;        // --trial and TUNEBENCH_TRIAL
  std::string worker;          // local worker program (local launcher)
  std::string config_path;     // local: the trial's config JSON, already written by the caller
  std::string events_socket;   // local/ssh: the caller's unix socket (ssh forwards to it)
  int master_port = 29500;     // rendezvous port: local, a free port; remote, one the caller picked
  std::string tcp_events;      // slurm: "HOST:PORT" of the caller's TCP listener
  std::string token;           // slurm: the trial's event token (env only, never in a file or preview)
  std::string nonce;           // random hex: remote socket names and heredoc markers
  std::string home;            // the caller's $HOME (slurm_dir's default)
  // Set: the ranks measure the link instead of training (the same processes, plus the probe's
  // arguments after --trial), whichever the launcher.
  std::optional<LinkProbeRange> link_probe;
  // A script trial, local launcher: the interpreter and the folder that holds tunebench_probe
  // (worker_program.h: find_python, find_probe), and the caller's PYTHONPATH (kept after it).
  std::string python;
  std::string probe_path;
  std::string pythonpath;
};

struct LaunchProcess {
  enum class Kind { Rank, SshNode, SlurmStep, SlurmBatch };
  Kind kind = Kind::Rank;
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // set on top of the caller's environment
  std::vector<int> ranks;                  // global ranks this process runs, in order
  int node = 0;                            // NODE_RANK of those ranks (slurm: 0, the whole job)
  std::string where;                       // "this machine", "alice@gpu2:2222", "SLURM"
  // ssh: closing the process's stdin ends its remote ranks (the node script watches it).
  bool stop_by_closing_stdin = false;
  std::string label() const;               // "rank 1", "node 1 (gpu2)", "srun", "sbatch"
};

struct LaunchPlan {
  std::vector<LaunchProcess> processes;
  // Files the caller writes before starting (slurm: the config and the batch script), path -> text.
  std::vector<std::pair<std::string, std::string>> files;
  bool tcp_events = false;  // the caller must listen on ctx.tcp_events and check the token
  // Every command as it will run, shell-quoted, one per process, with its environment (the
  // token's value masked). What the launch preview shows.
  std::string preview() const;
};

// Builds the plan for a *validated* config. Throws std::invalid_argument when the context lacks
// what the launcher needs (no events socket for ssh, no TCP address for slurm, ...).
LaunchPlan plan_launch(const config::TrialConfig& config, const LaunchContext& context);

// ---- the pieces, exposed for tests and for the preview ------------------------------------------

// POSIX shell quoting: 'text' with every ' as '\'' ; plain words stay as they are.
std::string shell_quote(std::string_view word);
std::string shell_join(const std::vector<std::string>& argv);
// The command that runs `config` by hand on one machine: `tunebench-worker` (under torchrun for
// several ranks) with a flag for every knob that differs from the defaults, each value
// shell-quoted. What autotune's result and the HTML report print under "how to reproduce".
std::string worker_command_line(const config::TrialConfig& config, const std::string& worker = "tunebench-worker");

// Torchrun-style variables of one local rank (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// NODE_RANK, MASTER_ADDR, MASTER_PORT, TUNEBENCH_TRIAL and the config's nccl_env).
std::map<std::string, std::string> local_rank_env(const config::TrialConfig& config, int rank, int master_port,
                                                  const std::string& trial_id);
std::vector<std::string> worker_arguments(const std::string& config_path, const std::string& events_spec,
                                          const std::string& trial_id);
// What the ranks do besides the common arguments: nothing for training, the probe's flags for a
// link probe (--probe-link --probe-min-mb X --probe-max-mb Y).
std::vector<std::string> worker_mode_arguments(const LaunchContext& context);

// Whether the ranks run the user's script under tunebench_probe (a script trial that is not a link
// probe: the link probe is the worker's).
bool runs_script(const config::TrialConfig& config, const LaunchContext& context);
// What a rank of a script trial runs after the common arguments: "--" SCRIPT ARGS... (the
// arguments' template filled in: config::script_argv).
std::vector<std::string> script_arguments(const config::TrialConfig& config);

// The remote socket an ssh node forwards to the caller's socket.
std::string remote_socket_path(const LaunchContext& context, int node);
// The shell script one ssh node runs (see the file comment).
std::string ssh_node_script(const config::TrialConfig& config, const LaunchContext& context, int node);
// The ssh command line of node `node` (the script as its last argument).
std::vector<std::string> ssh_argv(const config::TrialConfig& config, const LaunchContext& context, int node);
// The generated batch script of sbatch mode.
std::string sbatch_script(const config::TrialConfig& config, const LaunchContext& context);
std::string slurm_dir(const config::TrialConfig& config, const LaunchContext& context);

// "@tunebench rank-exit RANK CODE" (CODE 128+N for signal N, as the shell reports it).
std::optional<std::pair<int, int>> parse_rank_exit(std::string_view line);
// A job id printed by `sbatch --parsable` ("12345" or "12345;cluster").
std::optional<std::string> parse_sbatch_job_id(std::string_view line);
std::vector<std::string> scancel_argv(const std::string& job_id);

}  // namespace tunebench::launch
