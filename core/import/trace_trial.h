// One trial from the per-rank torch.profiler traces of one run: read, checked against each other,
// merged into a protocol::TrialLog with its known settings.
//
// The ranks must belong together: one world size, distinct ranks inside it, distinct trace ids,
// the same ProfilerStep numbers and overlapping time windows; anything else is a TraceError that
// says which files disagree and how. Settings the user types ("key=value") are checked before
// the files are read and applied after the trace's own (docs/IMPORT.md, "Known settings").
// Nothing here touches a session (trace_import.h does).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/protocol/trial_log.h"

namespace tunebench::import {

struct TraceImportOptions {
  std::string name;                   // trial name; empty: see default_trial_name
  std::vector<std::string> settings;  // "key=value" known settings (CLI --set, GUI form)
  // Bytes read so far over all files and their total; returning false cancels the import.
  std::function<bool(int64_t done_bytes, int64_t total_bytes)> progress;
};

struct TraceTrial {
  protocol::TrialLog log;             // every rank's hello, steps, warnings, log line, done
  std::string name;                   // the trial's name
  std::string source;                 // "import: torch.profiler rank0.pt.trace.json.gz (+1 rank)"
  nlohmann::json config;              // the known settings (hello.config of every rank)
  std::vector<std::string> warnings;  // "rank 0: ...", for the CLI and the GUI's log
  int world_size = 1;
  int64_t steps = 0;  // steps per rank (protocol::TrialLog::steps_per_rank), the figure shown everywhere
  int64_t file_bytes = 0, json_bytes = 0;
};

TraceTrial read_trace_trial(const std::vector<std::string>& paths, const TraceImportOptions& options = {});

// What the trial is, not where it lay: "<stem> (imported trace, N ranks)", the stem being the
// first file's name without .pt.trace.json(.gz) / .json(.gz) ("rank0.123 (imported trace, 2
// ranks)"). A folder is often just "traces" or "log". The user renames it (--name, Rename).
std::string default_trial_name(const std::string& first_path, int ranks);

// "key=value" -> {key, value}; throws TraceError for text without '='.
std::pair<std::string, std::string> split_setting(const std::string& text);
// Applies "key=value" settings to a config of known settings (config::set_known_setting); throws
// TraceError listing every problem, leaving `config` partly applied (callers discard it).
void apply_settings(nlohmann::json& config, const std::vector<std::string>& settings);

}  // namespace tunebench::import
