// Starting tunebench-worker ranks as child processes for tests: torchrun-style environment, a
// free port, an event file per rank, exit status, and the parsed events.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "core/protocol/trial_log.h"

namespace tunebench::testing {

struct RankRun {
  pid_t pid = -1;
  std::string events_path;
  std::string stderr_path;
  int exit_code = -1;  // -1 while running; 128+N for signal N
};

// A free TCP port on 127.0.0.1 (bound, then released).
int free_port();

// `base` with `more` appended: a worker's arguments plus a test's own.
inline std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Starts `world` ranks of the worker with `args` (events go to a file per rank).
std::vector<RankRun> start_ranks(int world, const std::vector<std::string>& args, const std::string& tag,
                                 const std::map<std::string, std::string>& extra_env = {}, int only_rank = -1);
// Waits up to `timeout_s` for a rank; returns its exit code, or -1 if still running.
int wait_rank(RankRun& run, double timeout_s);
// Kills and reaps every rank still running.
void kill_all(std::vector<RankRun>& runs);
protocol::TrialLog events_of(const RankRun& run);
std::string stderr_of(const RankRun& run);
// The small model every distributed test uses (fast on two cores).
std::vector<std::string> small_model_args();
// Raw float32 file written by --save-params.
std::vector<float> read_floats(const std::string& path);

}  // namespace tunebench::testing
