// Everything between "run this trial" and starting its processes, the same for the GUI's
// TrialRunner and the headless run_trial: the trial's private folder, its config file, the
// rendezvous port (the one free-port rule), the nonce and SLURM token, the launch plan and the
// files it needs. The runners add only their own event channel (QLocalServer or EventListener).
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"

namespace tunebench::launch {

// A failure before anything started; what() is the sentence for the user.
class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A private folder for one trial (mode 0700, under $TMPDIR or /tmp), removed with its contents
// when this object goes. Throws LaunchError when it cannot be created.
class TrialDir {
 public:
  TrialDir();
  ~TrialDir();
  TrialDir(const TrialDir&) = delete;
  TrialDir& operator=(const TrialDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  std::string m_path;
};

// A TCP port on 127.0.0.1 that was free a moment ago (a local rendezvous); 0 when none can be bound.
int free_local_port();
// This machine's name, as other hosts would reach it (the SLURM ranks' event address).
std::string host_name();

struct LaunchRequest {
  config::TrialConfig config;  // validated (config::validate) by the caller
  std::string trial_id;        // --trial and TUNEBENCH_TRIAL
  std::string worker;          // the local worker program; "" = find_worker's search from program_dir
  std::string program_dir;     // the calling program's folder ("" = this executable's)
  std::string dir;             // the trial's private folder (TrialDir): trial.json is written there
  std::string events_socket;   // the caller's unix socket, already listening
  std::optional<LinkProbeRange> link_probe;
  // SLURM only: starts the caller's TCP listener for ranks presenting `token`; returns its port,
  // or 0 with `error` set.
  std::function<int(const std::string& token, std::string* error)> listen_tcp;
};

struct PreparedLaunch {
  LaunchContext context;
  LaunchPlan plan;
};

// Writes the config, picks the port (local: free_local_port; ssh/slurm: one in 20000-29999, as the
// remote hosts' ports cannot be probed from here), makes the secrets, plans the launch and writes
// its files. Throws LaunchError with the sentence for the user.
PreparedLaunch prepare_launch(const LaunchRequest& request);

// "invalid configuration: ..." for a config that config::validate rejects; nullopt when valid.
std::optional<std::string> config_problems(const config::TrialConfig& config);

}  // namespace tunebench::launch
