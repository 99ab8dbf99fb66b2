// tunebench-worker: one rank of a benchmark trial. Only argument wiring lives here.
#include <csignal>
#include <iostream>

#include "rank_env.h"
#include "run_worker.h"
#include "worker_options.h"

int main(int argc, char** argv) {
  // A reader that goes away must not kill the rank mid-step: writes fail and are reported.
  std::signal(SIGPIPE, SIG_IGN);
  auto options = tunebench::worker::parse_worker_options(argc, argv);
  if (options.help_shown) return 0;
  std::string env_error;
  const auto env = tunebench::worker::read_rank_env(&env_error);
  if (!env_error.empty()) options.problems.push_back({"", env_error});
  return tunebench::worker::run_worker(std::move(options), env);
}
