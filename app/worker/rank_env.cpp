#include "rank_env.h"

#include <cerrno>
#include <cstdlib>

#include "core/protocol/events.h"

namespace tunebench::worker {
namespace {

std::optional<long> parse_int(const char* s) {
  if (!s || !*s) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

}  // namespace

RankEnv read_rank_env(std::string* error, const char* (*getenv_fn)(const char*)) {
  auto get = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  RankEnv env;
  const char* rank_var = nullptr;
  const char* world_var = nullptr;
  const char* local_var = nullptr;
  if (get("RANK") && get("WORLD_SIZE")) {
    env.source = "torchrun";
    rank_var = "RANK";
    world_var = "WORLD_SIZE";
    local_var = "LOCAL_RANK";
  } else if (get("SLURM_PROCID") && get("SLURM_NTASKS")) {
    env.source = "slurm";
    rank_var = "SLURM_PROCID";
    world_var = "SLURM_NTASKS";
    local_var = "SLURM_LOCALID";
  } else {
    return env;
  }
  auto fail = [&](const std::string& what) {
    if (error) *error = what;
    return env;
  };
  const auto rank = parse_int(get(rank_var));
  const auto world = parse_int(get(world_var));
  const auto local = get(local_var) ? parse_int(get(local_var)) : rank;
  if (!rank || !world || !local)
    return fail(std::string("malformed ") + rank_var + "/" + world_var + "/" + local_var + " in the environment");
  // Checked before narrowing to int: WORLD_SIZE=4294967298 used to become 2.
  if (*world > protocol::kMaxWorldSize)
    return fail(std::string(world_var) + "=" + std::to_string(*world) + " is more ranks than Tunebench runs (at most " +
                std::to_string(protocol::kMaxWorldSize) + ")");
  if (*local > protocol::kMaxWorldSize)
    return fail(std::string(local_var) + "=" + std::to_string(*local) + " is out of range");
  if (*world < 1 || *rank < 0 || *rank >= *world || *local < 0)
    return fail(std::string(rank_var) + "=" + std::to_string(*rank) + " is not a rank of " + world_var + "=" +
                std::to_string(*world));
  env.rank = static_cast<int>(*rank);
  env.world_size = static_cast<int>(*world);
  env.local_rank = static_cast<int>(*local);
  if (const char* a = get("MASTER_ADDR"); a && *a) env.master_addr = a;
  if (const char* p = get("MASTER_PORT")) {
    const auto port = parse_int(p);
    if (!port || *port <= 0 || *port > 65535) return fail(std::string("malformed MASTER_PORT '") + p + "'");
    env.master_port = static_cast<int>(*port);
  }
  return env;
}

}  // namespace tunebench::worker
