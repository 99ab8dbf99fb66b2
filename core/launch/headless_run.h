// Headless trials: run one trial to its end without a window and write it live into a session,
// exactly as the GUI does (store::TrialWriter; launch::TrialSupervisor decides the outcome, so the
// statuses, exit codes and exit reasons are the GUI's to the word).
//
// The launcher is the trial's own (config.launcher: local, ssh or slurm), built by plan_launch,
// the one definition of how ranks start. `tunebench-cli run` and `sweep` call run_trial; so can
// anything else that wants a measured trial (autotuning, investigations). Blocking; no Qt.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"
#include "core/launch/trial_supervisor.h"

namespace tunebench::launch {

struct HeadlessRequest {
  std::string session_path;            // created when missing
  config::TrialConfig config;          // validated by config::validate before anything starts
  std::string name;                    // trial name in the session
  std::string source;                  // provenance shown in the session ("cli run", "investigate 3", ...)
  std::vector<std::string> tags;       // stored as the trial's tags (groups use a tag)
  std::string worker;                  // empty: the installed/build-tree worker
  double timeout_s = 0;                // 0: none; else the trial is stopped and marked failed
  std::function<void(const Progress&)> on_progress;  // may be empty; called on the caller's thread
  std::function<void(const Note&)> on_note;          // may be empty: the runner's log (rank exits, SIGKILL)
  std::function<bool()> cancelled;     // may be empty; true stops every rank (polled every ~50 ms)
  // Set: the ranks measure the link (tunebench-worker --probe-link, launch_plan.h) instead of
  // training; progress counts the probe's message sizes.
  std::optional<LinkProbeRange> link_probe;
  SupervisorOptions supervision;  // grace period, start-up allowance, drain (timeout_s wins)
};

struct HeadlessResult {
  int64_t trial_id = -1;  // -1 when the trial could not even be added to the session
  // How it ended, as the GUI's runner reports it: status, exit code (0 done, 130 stopped, 124
  // timed out, 2 invalid configuration, the failed rank's code, else 1), reason (as stored in the
  // session), failed rank and stderr tail.
  TrialEnd end;
  // end.message() (the reason and the failed process's stderr tail), plus a note when the session
  // could not be updated.
  std::string message;
};

// Runs the trial to its end. Never throws: every failure is a result with status Failed (a bad
// config, a session that cannot be opened, a worker that cannot start, a rank that fails).
HeadlessResult run_trial(const HeadlessRequest& request);

}  // namespace tunebench::launch
