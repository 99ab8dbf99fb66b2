// Headless trials: run one trial to its end without a window and write it live into a session,
// exactly as the GUI does (store::TrialWriter, the same statuses and exit reasons).
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
#include "core/protocol/trial_status.h"

namespace tunebench::launch {

struct Progress {
  int step = 0;            // steps every rank has completed (a link probe: sizes measured)
  int steps = 0;           // steps planned (a link probe: sizes to measure)
  double ms_per_step = 0;  // mean of the steps since the first one seen (0 until two are seen)
  double eta_s = 0;        // remaining steps at that pace (0 until known)
};

struct HeadlessRequest {
  std::string session_path;            // created when missing
  config::TrialConfig config;          // validated by config::validate before anything starts
  std::string name;                    // trial name in the session
  std::string source;                  // provenance shown in the session ("cli run", "investigate 3", ...)
  std::vector<std::string> tags;       // stored as the trial's tags (groups use a tag)
  std::string worker;                  // empty: the installed/build-tree worker
  double timeout_s = 0;                // 0: none; else the trial is stopped and marked failed
  std::function<void(const Progress&)> on_progress;  // may be empty; called on the caller's thread
  std::function<bool()> cancelled;     // may be empty; true stops every rank (polled every ~50 ms)
  // Set: the ranks measure the link (tunebench-worker --probe-link, launch_plan.h) instead of
  // training; progress counts the probe's message sizes.
  std::optional<LinkProbeRange> link_probe;
};

struct HeadlessResult {
  int64_t trial_id = -1;  // -1 when the trial could not even be added to the session
  int exit_code = 0;      // 0 done; the failed rank's worker exit code; 130 stopped (cancelled)
  protocol::TrialStatus status = protocol::TrialStatus::Failed;  // Done, Failed or Stopped
  std::string message;    // the exit reason in words; empty when done
};

// Runs the trial to its end. Never throws: every failure is a result with status Failed (a bad
// config, a session that cannot be opened, a worker that cannot start, a rank that fails).
HeadlessResult run_trial(const HeadlessRequest& request);

}  // namespace tunebench::launch
