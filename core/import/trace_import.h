// Importing torch.profiler traces into a session as one trial, and editing its known settings.
//
// One call reads every rank's trace (trace_trial.h) and writes the trial through the same
// transaction as an event-log import (store::import_trial_log): it lands completely or not at all,
// so a bad, truncated or mismatched file, a bad setting or a cancel leave the session as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/import/trace_trial.h"

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::import {

struct TraceImportResult {
  int64_t trial_id = 0;
  std::string name;
  int ranks = 0;
  int world_size = 1;
  int64_t steps = 0;                       // steps per rank (protocol::TrialLog::steps_per_rank)
  int64_t file_bytes = 0, json_bytes = 0;  // read (as stored, uncompressed)
  std::vector<std::string> warnings;       // "rank 0: ..."
  std::vector<std::string> unknown_knobs;  // what the user may still fill in
};

// Throws TraceError (the traces, the settings, a cancel) or store::StoreError (the session).
// = read_trace_trial + store_trace_trial.
TraceImportResult import_torch_traces(store::SessionStore& store, const std::vector<std::string>& paths,
                                      const TraceImportOptions& options = {});
// Writes a trial read_trace_trial made (the GUI reads on a worker thread, then writes here on
// its own thread with its own store). Throws store::StoreError.
TraceImportResult store_trace_trial(store::SessionStore& store, const TraceTrial& trial);

// Sets "key=value" settings of an imported trial (a config with unknown knobs) in the session:
// validated as at import, written in one transaction, or nothing is written (TraceError listing
// the problems). A trial whose config is fully known (a native run) is refused: it ran with it.
// Keys in `forget` become unknown again (before the settings apply). Returns the new config JSON.
nlohmann::json edit_known_settings(store::SessionStore& store, int64_t trial_id,
                                   const std::vector<std::string>& settings,
                                   const std::vector<std::string>& forget = {});

}  // namespace tunebench::import
