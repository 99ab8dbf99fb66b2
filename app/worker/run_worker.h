// One rank from start to end: open the event channel, check the configuration, pick the device,
// join the other ranks, train, and turn every failure into an `error` event and an exit code.
#pragma once

#include "rank_env.h"
#include "worker_options.h"

namespace tunebench::worker {

int run_worker(WorkerOptions options, const RankEnv& env);

}  // namespace tunebench::worker
