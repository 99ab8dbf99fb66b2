// Importing a worker's event log (.jsonl from a headless or remote run) into a session as a trial.
//
// The whole log goes in as one transaction: an import either lands completely or not at all.
// A log holding several trial ids (two runs concatenated or interleaved) becomes one trial per id.
// Lines that are not events do not stop the import; they are counted, the first of them kept with
// the (first) trial (read_problems table) and returned so the caller can show them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/protocol/event_reader.h"
#include "core/protocol/trial_log.h"
#include "core/store/records.h"

namespace tunebench::store {

class SessionStore;

struct ImportResult {
  int64_t trial_id = 0;            // the first trial
  std::vector<int64_t> trial_ids;  // every trial, one per trial id in the log, in order of appearance
  int64_t events = 0;    // records stored (hello, model, step, gpu, log, warning, error, done)
  int64_t problems = 0;  // lines that were not valid events, and duplicate steps (notices excluded)
  std::vector<protocol::ReadProblem> problem_list;  // the first 100, for display
};

// `name` empty: the log's trial id, else the file name; with several trial ids each trial's name is
// `name` followed by its id in brackets. Throws StoreError when the file cannot be read or holds
// no event at all.
ImportResult import_event_log(SessionStore& store, const std::string& jsonl_path,
                              const std::string& name = "");

// What a log says about how its run ended: done when every rank sent done with exit code 0,
// failed (with the first error or exit code as the reason) on an error, else interrupted.
std::pair<TrialStatus, std::string> final_status(const protocol::TrialLog& log);

// The transaction both importers share: `log` becomes trial `name` with `source` ("import:
// run.jsonl"), its status from the log (done when every rank sent done, failed on an error).
// Used by import_event_log and by core/import for torch.profiler traces. Throws StoreError.
ImportResult import_trial_log(SessionStore& store, const protocol::TrialLog& log, const std::string& name,
                              const std::string& source);

// Trials carried over from another session (the copy an HTML report embeds): each becomes a trial
// with every record and its metadata as it was (name, config, status and exit reason, times,
// notes, tags); `source` says where it came from ("report: run.html"; empty: each trial keeps its
// own). A trial stored as running
// has no writer here: it comes back interrupted. One transaction: all of them or none. Throws
// StoreError.
ImportResult import_loaded_trials(SessionStore& store, const std::vector<LoadedTrial>& trials,
                                  const std::string& source);

}  // namespace tunebench::store
