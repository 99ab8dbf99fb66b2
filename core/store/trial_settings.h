// Replacing the configuration of a stored trial whose knobs are only partly known (an imported
// torch.profiler trace, docs/IMPORT.md "Known settings").
//
// The config lives twice: in the trials row (what the table and "run again" read) and in every
// rank's environment row (the hello's config, what the analysis reads). Both change in one
// transaction. Deciding what is valid is config::set_known_setting's job, not this file's.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace tunebench::store {

class SessionStore;

// Throws StoreError when there is no such trial, the session is read-only, or SQLite fails.
void set_trial_known_config(SessionStore& store, int64_t trial_id, const nlohmann::json& config);

}  // namespace tunebench::store
