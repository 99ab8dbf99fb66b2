// Reading a trial's records back into a protocol::TrialLog, every value type-checked.
//
// The inverse of EventInserter::insert_log. Reads only; the caller holds whatever read
// transaction it wants the load to be consistent under.
#pragma once

#include <cstdint>
#include <map>

#include "core/protocol/trial_log.h"

namespace SQLite {
class Database;
}

namespace tunebench::store {

// Throws StoreError for a value of the wrong type or out of range; SQLite::Exception otherwise.
protocol::TrialLog load_trial_log(SQLite::Database& db, int64_t trial_id);
// Only the hello (environment) and done (summary) records of each rank: cheap, for tables and
// for showing a trial's environment before it is run again.
std::map<int, protocol::Hello> load_trial_environment(SQLite::Database& db, int64_t trial_id);
std::map<int, protocol::Done> load_trial_summaries(SQLite::Database& db, int64_t trial_id);
// Each rank's hello and steps without their intervals: enough for the trial's step time
// (analysis/step_time.h) at a fraction of a full load.
protocol::TrialLog load_trial_steps(SQLite::Database& db, int64_t trial_id);

}  // namespace tunebench::store
