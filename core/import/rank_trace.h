// RankTrace: one rank's torch.profiler trace turned into protocol events, ready for a TrialLog.
//
// The output of reading one file: the hello (rank, world size, device, versions from the trace),
// the steps with their phase intervals, the caveats found on the way (said as sentences, stored as
// warning events with the trial), and the knob values the trace itself shows (known settings,
// docs/IMPORT.md). Plain data: the import checks several of these against each other before
// anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/protocol/events.h"

namespace tunebench::import {

struct RankTrace {
  std::string path;
  std::string trace_id;
  bool has_distributed_info = false;
  protocol::Hello hello;  // hello.config is filled by the import (the trial's known settings)
  int rank = 0;
  int64_t first_step_number = 0, last_step_number = 0;  // N of the first and last ProfilerStep#N
  std::vector<protocol::Step> steps;
  std::vector<std::string> warnings;                // caveats, one sentence each
  nlohmann::json known = nlohmann::json::object();  // knob values the trace shows (config keys)
  // Sizes, for messages and the benchmark.
  int64_t file_bytes = 0;
  int64_t json_bytes = 0;  // uncompressed
  int64_t events = 0;
  int64_t gpu_activities = 0;
};

}  // namespace tunebench::import
