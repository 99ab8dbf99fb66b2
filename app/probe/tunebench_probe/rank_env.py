"""Who this rank is: torchrun's variables, which Tunebench sets for every rank it starts (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR, MASTER_PORT). Without them the
script is rank 0 of 1.

The probe only reads them; the script's own init_process_group reads them too (env://), so the probe
takes no part in the rendezvous. SLURM's variables are not read here: Tunebench's launcher sets
torchrun's from them in each SLURM task of a script (core/launch/launch_plan.cpp,
slurm_task_command), for the script's init_process_group as much as for the probe.
"""
from dataclasses import dataclass

MAX_WORLD_SIZE = 1024  # the protocol's limit (kMaxWorldSize)


@dataclass(frozen=True)
class RankEnv:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0


def read_rank_env(environ):
    """Returns (RankEnv, problem sentence or "")."""
    values = {}
    for name, default in (("RANK", 0), ("WORLD_SIZE", 1), ("LOCAL_RANK", None)):
        text = environ.get(name, "").strip()
        if not text:
            values[name] = default
            continue
        try:
            values[name] = int(text)
        except ValueError:
            return RankEnv(), f"{name}={text!r} is not an integer"
    rank, world_size = values["RANK"], values["WORLD_SIZE"]
    local_rank = values["LOCAL_RANK"] if values["LOCAL_RANK"] is not None else rank
    if not 1 <= world_size <= MAX_WORLD_SIZE:
        return RankEnv(), f"WORLD_SIZE={world_size} is outside 1..{MAX_WORLD_SIZE}"
    if not 0 <= rank < world_size:
        return RankEnv(), f"RANK={rank} is outside 0..{world_size - 1} (WORLD_SIZE={world_size})"
    if not 0 <= local_rank < MAX_WORLD_SIZE:
        return RankEnv(), f"LOCAL_RANK={local_rank} is outside 0..{MAX_WORLD_SIZE - 1}"
    return RankEnv(rank, world_size, local_rank), ""
