// Exporting trials for other tools: CSV and JSON tables, and the Chrome trace event format.
//
// Pure functions from loaded trials to text, so the GUI's Export dialog and tunebench-cli share
// them and tests check them without files. CSV text fields are quoted and guarded against
// spreadsheet formula injection (a trial name from a shared file must not run as a formula).
// This unit deliberately computes nothing new: summaries are the workers' done events.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/records.h"

namespace tunebench::store {

// One row per step per rank per trial (the per-step table), with a header row.
void write_steps_csv(const std::vector<LoadedTrial>& trials, std::ostream& out);
// One row per rank per trial: metadata and the rank's done summary (empty cells if none).
void write_summaries_csv(const std::vector<LoadedTrial>& trials, std::ostream& out);

// {"format":"tunebench-trials","version":1,"trials":[{metadata, config, ranks:[{env, summary,
// steps:[...]}]}]}: summaries and the per-step table together.
nlohmann::json trials_to_json(const std::vector<LoadedTrial>& trials);

// A trial's timeline in the Chrome trace event format (Perfetto, chrome://tracing): one process
// per rank (pid = rank, named "rank N"), one thread per lane (tid 1 host, 2 compute, 3 comm),
// one complete event ("ph":"X") per interval with ts/dur in microseconds since the trial's first
// interval, on rank 0's clock (each rank's clock_offset_us applied). Args carry step, label,
// bytes and bus bandwidth.
nlohmann::json chrome_trace(const LoadedTrial& trial);

}  // namespace tunebench::store
