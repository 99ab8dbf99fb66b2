// The worker's environment switches (TUNEBENCH_*), read once and handed to what they change.
//
// A switch that changes what a trial measures is part of the trial: read_switches also returns the
// ones set, which the worker records in its hello event's `env` beside the NCCL variables, so the
// stored trial, the comparison and the HTML report show them. The table of every switch:
// docs/PROTOCOL.md, "Environment switches". Nothing else in the worker reads a TUNEBENCH_ variable
// of its own (the launchers' TUNEBENCH_TRIAL / TUNEBENCH_EVENT_TOKEN are the protocol's, not
// switches).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tunebench::engine {

struct Switches {
  // TUNEBENCH_MEMORY_PHASES=1: each eager step logs the allocator's peak of its forward, backward
  // and optimizer, reading the allocator and resetting its peak at the boundaries a memory-sampled
  // step's timeline reads, on every step (memory_sampler.h; a diagnostic of the memory model).
  bool memory_phases = false;
  // TUNEBENCH_GEMM=cublas: no GEMM algorithm search, cuBLAS's own pick (kernels/gemm_search.h).
  bool gemm_search = true;
  // TUNEBENCH_GEMM_LOG (any value): each searched GEMM shape's times on stderr.
  bool gemm_log = false;
  // TUNEBENCH_ADAMW=torch: PyTorch's fused AdamW where the project's kernel would run.
  bool torch_adamw = false;
  // TUNEBENCH_SAMPLER_DUMP=FILE: each kernel-sampled step's raw records and phase windows appended
  // to FILE, one JSON line per step (lab/sampler_dump_summary.py).
  std::string sampler_dump;
  // TUNEBENCH_MEMORY_SNAPSHOT=FILE: each memory-sampled step's allocator snapshot, and the one of
  // an out-of-memory moment, written to FILE (replacing it; telemetry/allocator_snapshot_file.h),
  // the recordings of tests/data/memory.
  std::string memory_snapshot;
  // TUNEBENCH_COLLECTIVE_DELAY=RANK:MS: rank RANK sleeps MS milliseconds before each collective it
  // starts, outside the collective's timing, so the others wait about MS inside it: a rank that
  // arrives last on purpose (the collective split's test, docs/ANALYSIS.md). -1: off.
  int collective_delay_rank = -1;
  double collective_delay_ms = 0;
  // Values that cannot be read ("TUNEBENCH_COLLECTIVE_DELAY=abc: ..."): the worker refuses to run.
  std::vector<std::string> problems;

  // The switches above that are set, name -> value as the environment has them (a set switch with a
  // value that changes nothing is recorded too: it is what the trial ran with).
  std::map<std::string, std::string> set;
};

// Reads every switch through `getenv` (injectable for tests; nullptr: the process's).
Switches read_switches(const char* (*getenv)(const char*) = nullptr);

// The names read_switches reads, in the order of the table in docs/PROTOCOL.md.
const std::vector<std::string>& switch_names();

}  // namespace tunebench::engine
