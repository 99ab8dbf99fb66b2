// Trials from the command line's inputs: event logs (.jsonl, split into one trial per trial id)
// and session files (.tbsession, opened read-only). Shared by `report`, `predict` and `accuracy`.
#pragma once

#include <string>
#include <vector>

#include "core/protocol/trial_log.h"
#include "core/store/records.h"

namespace tunebench::cli {

// Every file a command reads must be there: "cannot open PATH: No such file or directory" (exit
// status 1), the same words in every subcommand (issue 44; CLI11's own check said "File does not
// exist" with status 105). Throws std::runtime_error.
void require_files(const std::vector<std::string>& paths);

// `selection` (comma-separated trial ids or names) picks trials of session files; empty: every
// trial that recorded steps or link probe points. Bad lines of event logs are reported on stderr.
// Throws std::runtime_error when a file cannot be read. A session's trials come with what the
// session stored (name, config, status, notes, tags); an event log's trial has only its log's:
// its run id, its config from hello and the status its events tell (an empty name).
std::vector<store::LoadedTrial> read_loaded_trial_inputs(const std::vector<std::string>& paths,
                                                         const std::string& selection = {});
// The same as logs; `names`, when given, receives each trial's display name (a session's trial
// name; empty for an event log's trial, which has only its run id).
std::vector<protocol::TrialLog> read_trial_inputs(const std::vector<std::string>& paths,
                                                  const std::string& selection = {},
                                                  std::vector<std::string>* names = nullptr);

}  // namespace tunebench::cli
