#include "core/store/event_log_import.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/protocol/trial_log.h"
#include "core/store/event_inserter.h"
#include "core/store/limits.h"
#include "core/store/session_store.h"
#include "core/store/connection.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

namespace tp = protocol;

int64_t count_records(const tp::TrialLog& log) {
  int64_t n = 0;
  for (const auto& [rank, r] : log.ranks)
    n += (r.hello ? 1 : 0) + (r.model ? 1 : 0) + (r.done ? 1 : 0) +
         static_cast<int64_t>(r.steps.size() + r.samples.size() + r.logs.size() +
                              r.warnings.size() + r.errors.size());
  return n;
}

std::pair<int64_t, int64_t> time_span(const tp::TrialLog& log) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  auto see = [&](int64_t t) {
    if (t <= 0) return;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  };
  for (const auto& [rank, r] : log.ranks) {
    for (const auto& s : r.steps) see(s.start_us), see(s.end_us);
    for (const auto& g : r.samples) see(g.t_us);
    for (const auto& l : r.logs) see(l.t_us);
    for (const auto& e : r.errors) see(e.t_us);
  }
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One trial with every record of `log`, inside the caller's transaction. Returns its id.
int64_t insert_trial_log(SessionStore& store, const tp::TrialLog& log, const std::string& name,
                         const std::string& source) {
  nlohmann::json config = log.config();
  if (!config.is_object()) config = nlohmann::json::object();
  const auto [status, reason] = final_status(log);
  const auto [start_us, end_us] = time_span(log);
  SQLite::Database& db = store.database();
  const int64_t id = store.add_trial(name, config, TrialStatus::Queued, source);
  EventInserter inserter(db, id);
  inserter.insert_log(log);
  store.set_trial_status(id, status, reason);
  SQLite::Statement q(db, "UPDATE trials SET start_us = ?, end_us = ? WHERE id = ?");
  if (start_us)
    q.bind(1, start_us);
  else
    q.bind(1);
  if (end_us)
    q.bind(2, end_us);
  else
    q.bind(2);
  q.bind(3, id);
  q.exec();
  return id;
}

}  // namespace

std::pair<TrialStatus, std::string> final_status(const tp::TrialLog& log) {
  bool all_done = !log.ranks.empty();
  for (const auto& [rank, r] : log.ranks) {
    if (!r.errors.empty())
      return {TrialStatus::Failed, "rank " + std::to_string(rank) + ": " + r.errors.front().value.kind +
                                       ": " + r.errors.front().value.message.substr(0, 300)};
    if (r.done && r.done->exit_code != 0)
      return {TrialStatus::Failed,
              "rank " + std::to_string(rank) + " exited with code " + std::to_string(r.done->exit_code)};
    if (!r.done) all_done = false;
  }
  if (all_done) return {TrialStatus::Done, ""};
  return {TrialStatus::Interrupted, "the log ends before every rank reported done"};
}

ImportResult import_event_log(SessionStore& store, const std::string& jsonl_path,
                              const std::string& name) {
  std::vector<tp::TrialLog> logs;
  try {
    logs = tp::read_trial_logs_file(jsonl_path);
  } catch (const std::exception& e) {
    throw StoreError(std::string("cannot import: ") + e.what());
  }
  ImportResult result;
  for (const auto& log : logs) {
    // The reader refuses absurdly nested lines before parsing them (no stack overflow); a log that
    // holds one was crafted, not written by a worker: refuse the whole file.
    for (const auto& p : log.problems)
      if (tp::is_nesting_problem(p))
        throw StoreError("cannot import " + jsonl_path + ": line " + std::to_string(p.line_number) +
                         " nests JSON more than " + std::to_string(tp::EventReader::kMaxJsonDepth) +
                         " levels deep; this is not a worker event log");
    result.events += count_records(log);
    result.problems += log.problem_count;
    for (const auto& p : log.problems)
      if (result.problem_list.size() < 100) result.problem_list.push_back(p);
  }
  if (result.events == 0)
    throw StoreError("cannot import " + jsonl_path + ": it holds no Tunebench events (" +
                     std::to_string(result.problems) + " unreadable lines)");

  SQLite::Database& db = store.database();
  store.prepare_for_writing();  // outside the transaction: it may switch the journal to WAL
  try {
    SQLite::Transaction tx(db);
    for (const auto& log : logs) {
      std::string trial_name = !name.empty() ? name : !log.trial.empty() ? log.trial : file_name(jsonl_path);
      if (logs.size() > 1 && !name.empty()) trial_name += " [" + log.trial + "]";
      result.trial_ids.push_back(insert_trial_log(store, log, trial_name, "import: " + file_name(jsonl_path)));
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(store.path() + ": cannot import " + jsonl_path, e);
  }
  result.trial_id = result.trial_ids.front();
  return result;
}

ImportResult import_trial_log(SessionStore& store, const tp::TrialLog& log, const std::string& name,
                              const std::string& source) {
  ImportResult result;
  result.events = count_records(log);
  result.problems = log.problem_count;
  result.problem_list.assign(log.problems.begin(), log.problems.begin() + std::min<size_t>(log.problems.size(), 100));
  SQLite::Database& db = store.database();
  store.prepare_for_writing();  // outside the transaction: it may switch the journal to WAL
  try {
    SQLite::Transaction tx(db);
    result.trial_id = insert_trial_log(store, log, name, source);
    result.trial_ids = {result.trial_id};
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(store.path() + ": cannot import '" + name + "'", e);
  }
  return result;
}

ImportResult import_loaded_trials(SessionStore& store, const std::vector<LoadedTrial>& trials,
                                  const std::string& source) {
  ImportResult result;
  for (const auto& t : trials) {
    result.events += count_records(t.log);
    result.problems += t.log.problem_count;
  }
  SQLite::Database& db = store.database();
  store.prepare_for_writing();  // outside the transaction: it may switch the journal to WAL
  try {
    SQLite::Transaction tx(db);
    for (const auto& t : trials) {
      const TrialInfo& info = t.info;
      const int64_t id = insert_trial_log(store, t.log, info.name, source.empty() ? info.source : source);
      // What the other session knew beyond the records: the config as stored (an imported
      // trace's filled-in settings), status, reason, times, notes and tags.
      const TrialStatus status = info.status == TrialStatus::Running ? TrialStatus::Interrupted : info.status;
      const std::string config = info.config.is_object()
                                     ? info.config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                     : std::string("{}");
      if (config.size() > kMaxJsonBytes) throw StoreError("the config of trial '" + info.name + "' is too large");
      SQLite::Statement q(db,
                          "UPDATE trials SET config = ?, status = ?, exit_reason = ?, created_us = ?, start_us = ?, "
                          "end_us = ?, notes = ? WHERE id = ?");
      q.bind(1, config);
      q.bind(2, std::string(to_string(status)));
      q.bind(3, bounded(info.status == TrialStatus::Running ? "its writer was in another session" : info.exit_reason,
                        kMaxShortTextBytes));
      q.bind(4, info.created_us);
      if (info.start_us)
        q.bind(5, *info.start_us);
      else
        q.bind(5);
      if (info.end_us)
        q.bind(6, *info.end_us);
      else
        q.bind(6);
      q.bind(7, bounded(info.notes, kMaxNotesBytes));
      q.bind(8, id);
      q.exec();
      store.set_trial_tags(id, info.tags);
      result.trial_ids.push_back(id);
      for (const auto& p : t.log.problems)
        if (result.problem_list.size() < 100) result.problem_list.push_back(p);
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(store.path() + ": cannot import the trials", e);
  }
  if (!result.trial_ids.empty()) result.trial_id = result.trial_ids.front();
  return result;
}

}  // namespace tunebench::store
