// Where a rank learns who it is: torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT), SLURM's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and
// MASTER_ADDR/MASTER_PORT that the batch script exports), or nothing (rank 0 of 1).
#pragma once

#include <optional>
#include <string>

namespace tunebench::worker {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "none";  // "torchrun" | "slurm" | "none"
};

// Reads the environment through `getenv` (injectable for tests). Returns an error sentence when a
// variable is present but malformed or inconsistent.
RankEnv read_rank_env(std::string* error, const char* (*getenv)(const char*) = nullptr);

}  // namespace tunebench::worker
