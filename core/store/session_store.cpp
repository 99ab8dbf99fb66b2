// SessionStore: opening (inspect read-only, then migrate), trial metadata, editing and loading.
#include "core/store/session_store.h"

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <optional>
#include <set>
#include <sys/stat.h>

#include "core/protocol/events.h"
#include "core/store/connection.h"
#include "core/store/file_guard.h"
#include "core/store/limits.h"
#include "core/store/process_identity.h"
#include "core/store/row_reader.h"
#include "core/store/schema.h"
#include "core/store/store_error.h"
#include "core/store/trial_loader.h"

namespace tunebench::store {
namespace {

// Runs f, turning SQLite's exceptions into a StoreError that names the file and the action.
template <class F> auto guarded(const std::string& path, const char* what, F&& f) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(path + ": cannot " + what, e);
  } catch (const nlohmann::json::exception&) {
    throw StoreError(path + ": cannot " + what + ": a configuration stored in it is not valid JSON");
  }
}

// Names are one line of bounded text: control characters become spaces.
std::string clean_name(const std::string& name) {
  std::string out = bounded(name, kMaxNameBytes);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

const char* const kTrialColumns =
    "SELECT t.id, t.name, t.run_id, t.config, t.status, t.created_us, t.start_us, t.end_us, "
    "t.exit_reason, t.source, t.notes, (SELECT count(*) FROM steps s WHERE s.trial_id = t.id), "
    "t.owner FROM trials t";

TrialInfo read_trial_row(SQLite::Statement& q) {
  RowReader r(q, "trials");
  TrialInfo t;
  t.id = r.i64(0);
  t.name = r.text(1, kMaxNameBytes);
  t.run_id = r.text(2, kMaxShortTextBytes);
  t.config = r.json(3);
  const auto status = protocol::trial_status_from_string(r.text(4, 32));
  if (!status) throw StoreError("the session file has a trial with an unknown status");
  t.status = *status;
  t.created_us = r.i64(5);
  t.start_us = r.opt_i64(6);
  t.end_us = r.opt_i64(7);
  t.exit_reason = r.text(8, kMaxShortTextBytes);
  t.source = r.text(9, kMaxShortTextBytes);
  t.notes = r.text(10, kMaxNotesBytes);
  t.step_count = r.i64(11);
  // A read-only view cannot mark a dead writer's trial, but must not show it as running either.
  if (t.status == TrialStatus::Running) {
    const std::string owner = r.text(12, kMaxShortTextBytes);
    if (owner_is_gone(owner)) {
      t.status = TrialStatus::Interrupted;
      t.exit_reason = "its writer (process " + std::to_string(owner_pid(owner)) +
                      ") stopped before the trial finished";
    }
  }
  return t;
}

// Tags arrived with schema 2; a version-1 file (opened read-only, or not changed yet) has none.
std::vector<std::string> read_tags(SQLite::Database& db, int64_t id) {
  std::vector<std::string> tags;
  SQLite::Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trial_tags'");
  if (!has.executeStep()) return tags;
  SQLite::Statement q(db, "SELECT tag FROM trial_tags WHERE trial_id = ? ORDER BY tag");
  q.bind(1, id);
  while (q.executeStep() && tags.size() < kMaxTagsPerTrial)
    tags.push_back(RowReader(q, "trial_tags").text(0, kMaxTagBytes));
  return tags;
}

}  // namespace

SessionStore::SessionStore(std::string path, std::unique_ptr<SQLite::Database> db, bool read_only,
                           int version)
    : m_path(std::move(path)), m_db(std::move(db)), m_read_only(read_only), m_version(version) {}
SessionStore::SessionStore(SessionStore&&) noexcept = default;
SessionStore& SessionStore::operator=(SessionStore&&) noexcept = default;
SessionStore::~SessionStore() = default;

SessionStore SessionStore::create(const std::string& path, const std::string& name) {
  if (file_exists(path)) throw StoreError(path + " already exists; choose another file name");
  auto db = open_connection(path, OpenMode::Create, OpenOptions{}.busy_timeout);
  guarded(path, "create the session", [&] {
    // The schema is written in rollback-journal mode so the main file's header carries our
    // application id and version from the start; WAL comes after.
    migrate(*db, 0, kSchemaVersion);
    SQLite::Statement q(*db, "INSERT INTO session (id, name, created_us, notes) VALUES (1, ?, ?, '')");
    q.bind(1, clean_name(name));
    q.bind(2, protocol::now_us());
    q.exec();
    configure_for_writing(*db);
  });
  SessionStore store(path, std::move(db), false, kSchemaVersion);
  store.m_prepared = true;
  return store;
}

SessionStore SessionStore::open(const std::string& path, const OpenOptions& options) {
  check_file_header(path, options.max_file_bytes);
  auto ro = open_connection(path, OpenMode::ReadOnly, options.busy_timeout);
  const int version = check_session_database(*ro, path, options.check_integrity);
  if (options.mode == Mode::ReadOnly) return SessionStore(path, std::move(ro), true, version);
  ro.reset();

  auto db = open_connection(path, OpenMode::ReadWrite, options.busy_timeout);
  // SQLite quietly falls back to read-only for a write-protected file; say so instead.
  if (sqlite3_db_readonly(db->getHandle(), "main") == 1)
    throw StoreError(path + " is write-protected; open it read-only to look at it");
  // Nothing is written yet: the file is migrated, switched to WAL and cleaned of orphaned trials
  // by the first change (prepare_for_writing), so merely reading a file never alters it.
  return SessionStore(path, std::move(db), false, version);
}

void SessionStore::require_writable(const char* what) {
  if (m_read_only) throw StoreError(m_path + " is open read-only: cannot " + what);
  prepare_for_writing();
}

void SessionStore::prepare_for_writing() {
  if (m_read_only) throw StoreError(m_path + " is open read-only: it cannot be changed");
  if (m_prepared) return;
  migrate_if_older();
  mark_orphans();
}

void SessionStore::migrate_if_older() {
  guarded(m_path, "prepare the session for writing", [&] {
    configure_for_writing(*m_db);
    // The file may have changed since it was checked: another connection of ours (a TrialWriter)
    // may have migrated it already; anything else is refused.
    const int version = file_version();
    if (m_db->execAndGet("PRAGMA application_id").getInt() != kApplicationId || version < m_version ||
        version > kSchemaVersion)
      throw StoreError(m_path + " changed while it was open; open it again");
    if (version < kSchemaVersion) migrate(*m_db, version, kSchemaVersion);
  });
  m_version = kSchemaVersion;
  m_prepared = true;
}

int SessionStore::file_version() const {
  return guarded(m_path, "read the schema version", [&] { return m_db->execAndGet("PRAGMA user_version").getInt(); });
}

bool SessionStore::needs_upgrade() const { return std::max(m_version, file_version()) < kSchemaVersion; }

SessionInfo SessionStore::info() const {
  return guarded(m_path, "read the session", [&] {
    SQLite::Statement q(*m_db, "SELECT name, created_us, notes FROM session WHERE id = 1");
    if (!q.executeStep()) throw StoreError(m_path + " has no session record");
    RowReader r(q, "session");
    SessionInfo s;
    s.path = m_path;
    s.name = r.text(0, kMaxNameBytes);
    s.created_us = r.i64(1);
    s.notes = r.text(2, kMaxNotesBytes);
    s.schema_version = std::max(m_version, std::min(file_version(), kSchemaVersion));
    s.read_only = m_read_only;
    return s;
  });
}

void SessionStore::set_name(const std::string& name) {
  require_writable("rename the session");
  guarded(m_path, "rename the session", [&] {
    SQLite::Statement q(*m_db, "UPDATE session SET name = ? WHERE id = 1");
    q.bind(1, clean_name(name));
    q.exec();
  });
}

void SessionStore::set_notes(const std::string& notes) {
  require_writable("change the session notes");
  guarded(m_path, "change the session notes", [&] {
    SQLite::Statement q(*m_db, "UPDATE session SET notes = ? WHERE id = 1");
    q.bind(1, bounded(notes, kMaxNotesBytes));
    q.exec();
  });
}

std::vector<TrialInfo> SessionStore::list_trials() const {
  return guarded(m_path, "list the trials", [&] {
    std::vector<TrialInfo> out;
    SQLite::Transaction snapshot(*m_db);  // one consistent view while a writer is adding
    SQLite::Statement q(*m_db, std::string(kTrialColumns) + " ORDER BY t.id");
    while (q.executeStep()) out.push_back(read_trial_row(q));
    for (auto& t : out) t.tags = read_tags(*m_db, t.id);
    return out;
  });
}

std::vector<TrialHead> SessionStore::trial_heads() const {
  return guarded(m_path, "list the trials", [&] {
    std::vector<TrialHead> out;
    SQLite::Statement q(*m_db, "SELECT id, status, name, owner FROM trials ORDER BY id");
    while (q.executeStep()) {
      RowReader r(q, "trials");
      TrialHead h;
      h.id = r.i64(0);
      const auto status = protocol::trial_status_from_string(r.text(1, 32));
      if (!status) throw StoreError("the session file has a trial with an unknown status");
      h.status = *status;
      h.name = r.text(2, kMaxNameBytes);
      if (h.status == TrialStatus::Running && owner_is_gone(r.text(3, kMaxShortTextBytes)))
        h.status = TrialStatus::Interrupted;
      out.push_back(std::move(h));
    }
    return out;
  });
}

int64_t SessionStore::data_version() const {
  return guarded(m_path, "read the session's version", [&] { return m_db->execAndGet("PRAGMA data_version").getInt64(); });
}

TrialInfo SessionStore::trial(int64_t id) const {
  return guarded(m_path, "read the trial", [&] {
    SQLite::Statement q(*m_db, std::string(kTrialColumns) + " WHERE t.id = ?");
    q.bind(1, id);
    if (!q.executeStep()) throw StoreError(m_path + " has no trial " + std::to_string(id));
    TrialInfo t = read_trial_row(q);
    t.tags = read_tags(*m_db, id);
    return t;
  });
}

int64_t SessionStore::add_trial(const std::string& name, const nlohmann::json& config,
                                TrialStatus status, const std::string& source) {
  require_writable("add a trial");
  return guarded(m_path, "add a trial", [&] {
    const std::string config_text =
        config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (config_text.size() > kMaxJsonBytes) throw StoreError("the trial's config is too large");
    SQLite::Statement q(*m_db,
        "INSERT INTO trials (name, config, status, created_us, source) VALUES (?, ?, ?, ?, ?)");
    q.bind(1, clean_name(name));
    q.bind(2, config_text);
    q.bind(3, std::string(to_string(status)));
    q.bind(4, protocol::now_us());
    q.bind(5, bounded(source, kMaxShortTextBytes));
    q.exec();
    return m_db->getLastInsertRowid();
  });
}

void SessionStore::rename_trial(int64_t id, const std::string& name) {
  require_writable("rename a trial");
  guarded(m_path, "rename the trial", [&] {
    SQLite::Statement q(*m_db, "UPDATE trials SET name = ? WHERE id = ?");
    q.bind(1, clean_name(name));
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError(m_path + " has no trial " + std::to_string(id));
  });
}

void SessionStore::delete_trial(int64_t id) {
  require_writable("delete a trial");
  guarded(m_path, "delete the trial", [&] {
    SQLite::Transaction tx(*m_db);
    // Intervals first: their cascade through steps would otherwise run row by row.
    SQLite::Statement qi(*m_db,
        "DELETE FROM intervals WHERE step_id IN (SELECT id FROM steps WHERE trial_id = ?)");
    qi.bind(1, id);
    qi.exec();
    SQLite::Statement q(*m_db, "DELETE FROM trials WHERE id = ?");
    q.bind(1, id);
    if (q.exec() == 0) throw StoreError(m_path + " has no trial " + std::to_string(id));
    tx.commit();
  });
}

int64_t SessionStore::duplicate_trial(int64_t id, const std::string& new_name) {
  const TrialInfo original = trial(id);
  const std::string name = new_name.empty() ? original.name + " (copy)" : new_name;
  const int64_t copy = add_trial(name, original.config, TrialStatus::Queued,
                                 "duplicate of trial " + std::to_string(id));
  if (!original.tags.empty()) set_trial_tags(copy, original.tags);
  return copy;
}

void SessionStore::set_trial_notes(int64_t id, const std::string& notes) {
  require_writable("annotate a trial");
  guarded(m_path, "change the trial notes", [&] {
    SQLite::Statement q(*m_db, "UPDATE trials SET notes = ? WHERE id = ?");
    q.bind(1, bounded(notes, kMaxNotesBytes));
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError(m_path + " has no trial " + std::to_string(id));
  });
}

void SessionStore::set_trial_tags(int64_t id, const std::vector<std::string>& tags) {
  require_writable("tag a trial");
  std::set<std::string> clean;
  for (const auto& t : tags) {
    std::string c = clean_name(bounded(t, kMaxTagBytes));
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    if (!c.empty()) clean.insert(c);
  }
  if (clean.size() > kMaxTagsPerTrial) throw StoreError("a trial can have at most 64 tags");
  guarded(m_path, "tag the trial", [&] {
    // Inside a caller's transaction (an import of whole trials) the tags join it.
    std::optional<SQLite::Transaction> tx;
    if (sqlite3_get_autocommit(m_db->getHandle()) != 0) tx.emplace(*m_db);
    trial(id);  // throws when missing
    SQLite::Statement del(*m_db, "DELETE FROM trial_tags WHERE trial_id = ?");
    del.bind(1, id);
    del.exec();
    SQLite::Statement ins(*m_db, "INSERT INTO trial_tags (trial_id, tag) VALUES (?, ?)");
    for (const auto& tag : clean) {
      ins.bind(1, id);
      ins.bind(2, tag);
      ins.exec();
      ins.reset();
    }
    if (tx) tx->commit();
  });
}

void SessionStore::set_trial_status(int64_t id, TrialStatus status, const std::string& exit_reason) {
  require_writable("change a trial's status");
  guarded(m_path, "change the trial status", [&] {
    const bool running = status == TrialStatus::Running;
    const bool ended = status != TrialStatus::Queued && !running;
    SQLite::Statement q(*m_db,
        "UPDATE trials SET status = ?, exit_reason = ?, "
        "start_us = CASE WHEN ? THEN coalesce(start_us, ?) ELSE start_us END, "
        "end_us = CASE WHEN ? THEN coalesce(end_us, ?) ELSE end_us END, "
        "owner = CASE WHEN ? THEN owner ELSE '' END WHERE id = ?");
    const int64_t now = protocol::now_us();
    q.bind(1, std::string(to_string(status)));
    q.bind(2, bounded(exit_reason, kMaxShortTextBytes));
    q.bind(3, running ? 1 : 0);
    q.bind(4, now);
    q.bind(5, ended ? 1 : 0);
    q.bind(6, now);
    q.bind(7, running ? 1 : 0);
    q.bind(8, id);
    if (q.exec() == 0) throw StoreError(m_path + " has no trial " + std::to_string(id));
  });
}

LoadedTrial SessionStore::load_trial(int64_t id) const {
  return guarded(m_path, "load the trial", [&] {
    SQLite::Transaction snapshot(*m_db);
    LoadedTrial t;
    t.info = trial(id);
    t.log = load_trial_log(*m_db, id);
    return t;
  });
}

std::map<int, protocol::Hello> SessionStore::trial_environment(int64_t id) const {
  return guarded(m_path, "read the trial environment", [&] {
    trial(id);  // throws when missing
    return load_trial_environment(*m_db, id);
  });
}

std::map<int, protocol::Done> SessionStore::trial_summaries(int64_t id) const {
  return guarded(m_path, "read the trial summaries", [&] {
    trial(id);
    return load_trial_summaries(*m_db, id);
  });
}

protocol::TrialLog SessionStore::trial_steps(int64_t id) const {
  return guarded(m_path, "read the trial's steps", [&] {
    SQLite::Transaction snapshot(*m_db);
    trial(id);
    return load_trial_steps(*m_db, id);
  });
}

void SessionStore::save_as(const std::string& path) const {
  if (file_exists(path)) throw StoreError(path + " already exists; choose another file name");
  guarded(m_path, "save a copy", [&] {
    // VACUUM INTO attaches the target internally; our connections otherwise allow no ATTACH.
    sqlite3* h = m_db->getHandle();
    sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 1);
    struct Restore {
      sqlite3* h;
      ~Restore() { sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0); }
    } restore{h};
    SQLite::Statement q(*m_db, "VACUUM INTO ?");
    q.bind(1, path);
    q.exec();
  });
}

int SessionStore::mark_orphaned_trials_interrupted() {
  if (m_read_only) return 0;
  if (!m_prepared) migrate_if_older();
  return mark_orphans();
}

int SessionStore::mark_orphans() {
  return guarded(m_path, "check for interrupted trials", [&] {
    std::vector<std::pair<int64_t, std::string>> running;
    SQLite::Statement q(*m_db, "SELECT id, owner FROM trials WHERE status = 'running'");
    while (q.executeStep()) {
      RowReader r(q, "trials");
      running.emplace_back(r.i64(0), r.text(1, kMaxShortTextBytes));
    }
    int marked = 0;
    for (const auto& [id, owner] : running) {
      if (!owner_is_gone(owner)) continue;
      SQLite::Statement u(*m_db,
          "UPDATE trials SET status = 'interrupted', owner = '', exit_reason = ?, "
          "end_us = coalesce((SELECT max(end_us) FROM steps WHERE trial_id = ?), start_us) "
          "WHERE id = ? AND status = 'running'");
      const long pid = owner_pid(owner);
      u.bind(1, "its writer (process " + std::to_string(pid) +
                    ") stopped before the trial finished; records up to its last batch are kept");
      u.bind(2, id);
      u.bind(3, id);
      marked += u.exec();
    }
    return marked;
  });
}

}  // namespace tunebench::store
