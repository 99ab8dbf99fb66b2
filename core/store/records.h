// Plain data the session store hands out: session and trial metadata, and a loaded trial.
//
// Copyable structs with no behaviour, so the GUI's models can hold them directly (hotspot's
// `Data` namespace idea). Events themselves stay protocol types: a loaded trial is a
// protocol::TrialLog plus its metadata, the same thing analysis reads from a live run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/protocol/trial_log.h"
#include "core/protocol/trial_status.h"

namespace tunebench::store {

// The trial's status is the one protocol::TrialStatus (core/protocol/trial_status.h), named here
// too because the store's functions take and return it.
using protocol::TrialStatus;

struct SessionInfo {
  std::string path;
  std::string name;
  int64_t created_us = 0;  // microseconds since the Unix epoch
  std::string notes;
  int schema_version = 0;  // PRAGMA user_version of the file as opened (after migration)
  bool read_only = false;
};

struct TrialInfo {
  int64_t id = 0;               // row id, stable within the session
  std::string name;
  std::string run_id;           // the trial id carried by the events (Header::trial), may be empty
  nlohmann::json config = nlohmann::json::object();  // TrialConfig JSON as queued / as run
  TrialStatus status = TrialStatus::Queued;
  int64_t created_us = 0;
  std::optional<int64_t> start_us;
  std::optional<int64_t> end_us;
  std::string exit_reason;      // one sentence, empty while queued or running
  std::string source;           // "live", "import: run.jsonl", "duplicate of 3"
  std::string notes;
  std::vector<std::string> tags;  // sorted
  int64_t step_count = 0;         // step records over all ranks
};

// What a window compares to notice trials another process added, finished, renamed or deleted,
// without counting steps (SessionStore::trial_heads).
struct TrialHead {
  int64_t id = 0;
  TrialStatus status = TrialStatus::Queued;
  std::string name;
  bool operator==(const TrialHead& o) const { return id == o.id && status == o.status && name == o.name; }
  bool operator!=(const TrialHead& o) const { return !(*this == o); }
};

struct LoadedTrial {
  TrialInfo info;
  protocol::TrialLog log;
};

}  // namespace tunebench::store
