#include "core/import/trace_import.h"

#include "core/config/known_settings.h"
#include "core/import/trace_error.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "core/store/trial_settings.h"

namespace tunebench::import {

TraceImportResult import_torch_traces(store::SessionStore& store, const std::vector<std::string>& paths,
                                      const TraceImportOptions& options) {
  return store_trace_trial(store, read_trace_trial(paths, options));
}

TraceImportResult store_trace_trial(store::SessionStore& store, const TraceTrial& trial) {
  const store::ImportResult stored = store::import_trial_log(store, trial.log, trial.name, trial.source);
  TraceImportResult r;
  r.trial_id = stored.trial_id;
  r.name = trial.name;
  r.ranks = static_cast<int>(trial.log.ranks.size());
  r.world_size = trial.world_size;
  r.steps = trial.steps;
  r.file_bytes = trial.file_bytes;
  r.json_bytes = trial.json_bytes;
  r.warnings = trial.warnings;
  r.unknown_knobs = config::unknown_knobs(trial.config);
  return r;
}

nlohmann::json edit_known_settings(store::SessionStore& store, int64_t trial_id,
                                   const std::vector<std::string>& settings, const std::vector<std::string>& forget) {
  const store::TrialInfo info = store.trial(trial_id);
  nlohmann::json config = info.config;
  if (config::unknown_knobs(config).empty())
    throw TraceError("trial " + std::to_string(trial_id) + " '" + info.name +
                     "' ran with a complete configuration; only imported trials have settings to fill in.");
  for (const std::string& key : forget) config::forget_setting(config, key);
  apply_settings(config, settings);
  store::set_trial_known_config(store, trial_id, config);
  return config;
}

}  // namespace tunebench::import
