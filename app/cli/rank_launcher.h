// Starting worker ranks on this machine from the command line, torchrun-style: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR and MASTER_PORT (a free port) per process, events to a file per rank,
// stderr to a file beside it. Used by `tunebench-cli probe`, whose ranks write file: logs; the
// variables and the worker's place come from core/launch, as for every other launch.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tunebench::cli {

struct LaunchedRank {
  pid_t pid = -1;
  std::string events_path;
  std::string stderr_path;
  int exit_code = -1;  // -1: still running (or killed after the timeout); 128+N for signal N
};

// The worker binary: `explicit_path`, else $TUNEBENCH_WORKER, else beside this program or in the
// build tree's app/worker. Throws std::runtime_error naming where it looked.
std::string find_worker(const std::string& explicit_path);

// Starts `world` ranks of `worker` with `args` (after --events and --trial), files under `dir`.
std::vector<LaunchedRank> launch_ranks(const std::string& worker, int world, const std::vector<std::string>& args,
                                       const std::string& trial, const std::string& dir);

// Waits for every rank up to `timeout_s` in all; ranks still running then are killed (SIGKILL,
// by pid) and keep exit_code -1. Returns true when every rank exited by itself.
bool wait_ranks(std::vector<LaunchedRank>& ranks, double timeout_s);

}  // namespace tunebench::cli
