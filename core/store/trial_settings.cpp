#include "core/store/trial_settings.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/limits.h"
#include "core/store/session_store.h"
#include "core/store/connection.h"
#include "core/store/store_error.h"

namespace tunebench::store {

void set_trial_known_config(SessionStore& store, int64_t trial_id, const nlohmann::json& config) {
  if (store.read_only()) throw StoreError(store.path() + " is open read-only: the trial's settings cannot change");
  store.trial(trial_id);  // throws when there is no such trial
  const std::string text = config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxJsonBytes) throw StoreError("the trial's configuration is too large to store");
  SQLite::Database& db = store.database();
  store.prepare_for_writing();  // a change: migrates an older file first, outside the transaction
  try {
    SQLite::Transaction tx(db);
    for (const char* sql :
         {"UPDATE trials SET config = ? WHERE id = ?", "UPDATE rank_env SET config = ? WHERE trial_id = ?"}) {
      SQLite::Statement q(db, sql);
      q.bind(1, text);
      q.bind(2, trial_id);
      q.exec();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(store.path() + ": cannot change the settings of trial " + std::to_string(trial_id), e);
  }
}

}  // namespace tunebench::store
