// SessionStore: one .tbsession file (SQLite) holding a tuning session and all its trials.
//
// Opening is safe for files from anyone: the file is inspected read-only first (file_guard.h) and
// only a file that is ours, intact, and not newer is migrated or written. Every failure is a
// StoreError with a sentence for the user. Live event writing is TrialWriter's job (it opens its
// own connection); this class does metadata, loading and editing.
//
// Not thread-safe: use one SessionStore per thread. Several stores (and processes) may have the
// same file open; SQLite's WAL lets readers see each committed batch of a live writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/store/records.h"

namespace SQLite {
class Database;
}

namespace tunebench::store {

class SessionStore {
 public:
  enum class Mode { ReadOnly, ReadWrite };
  struct OpenOptions {
    Mode mode = Mode::ReadWrite;
    int64_t max_file_bytes = int64_t{8} << 30;
    // PRAGMA quick_check on open (reads the whole file). Off only for the writer's own reopen.
    bool check_integrity = true;
    // How long to wait for another connection's lock before saying the file is busy.
    std::chrono::milliseconds busy_timeout{5000};
  };

  // Creates a new session file; fails if `path` exists.
  static SessionStore create(const std::string& path, const std::string& name);
  // Opens an existing session after checking it. Opening changes nothing in the file, in either
  // mode: a ReadWrite store migrates an older schema, switches the file to WAL and marks running
  // trials whose writer is gone as interrupted only on its first change (prepare_for_writing).
  static SessionStore open(const std::string& path, const OpenOptions& options);
  static SessionStore open(const std::string& path) { return open(path, OpenOptions{}); }

  SessionStore(SessionStore&&) noexcept;
  SessionStore& operator=(SessionStore&&) noexcept;
  ~SessionStore();

  // ---- session ----
  SessionInfo info() const;
  void set_name(const std::string& name);
  void set_notes(const std::string& notes);

  // ---- trials ----
  // A trial stored as running whose writer is gone is reported as interrupted, also read-only.
  std::vector<TrialInfo> list_trials() const;
  TrialInfo trial(int64_t id) const;  // throws StoreError when there is no such trial
  // Every trial's id, status and name in id order: cheap (no step counts), for a window that
  // looks for another process's changes (a running trial whose writer is gone reads interrupted).
  std::vector<TrialHead> trial_heads() const;
  // SQLite's PRAGMA data_version of this connection: it changes when any other connection, of
  // this process or another, commits to the file. Reads no pages.
  int64_t data_version() const;
  // A new trial (default: queued). Returns its id.
  int64_t add_trial(const std::string& name, const nlohmann::json& config,
                    TrialStatus status = TrialStatus::Queued, const std::string& source = "");
  void rename_trial(int64_t id, const std::string& name);
  void delete_trial(int64_t id);  // with all its records
  // "Run again with changes": a queued copy of the trial's config, no records. Returns the new id.
  int64_t duplicate_trial(int64_t id, const std::string& new_name = "");
  void set_trial_notes(int64_t id, const std::string& notes);
  // In its own transaction, or in the caller's when one is open.
  void set_trial_tags(int64_t id, const std::vector<std::string>& tags);
  // Running belongs to TrialWriter (it records the owning process); a trial set running here has
  // no owner and is taken for interrupted at the next read-write open.
  void set_trial_status(int64_t id, TrialStatus status, const std::string& exit_reason = "");
  LoadedTrial load_trial(int64_t id) const;
  // Each rank's environment (hello: host, devices, driver/CUDA/NCCL/libtorch versions, NCCL env,
  // the config it ran), without loading steps: what to show before running a trial again.
  std::map<int, protocol::Hello> trial_environment(int64_t id) const;
  // Each rank's done summary, without loading steps: for the trials table.
  std::map<int, protocol::Done> trial_summaries(int64_t id) const;
  // Each rank's hello and steps without intervals: what analysis::trial_step_ms needs, cheaply.
  protocol::TrialLog trial_steps(int64_t id) const;

  // Writes a compact, self-contained copy of the session to `path` (which must not exist):
  // one file with no -wal beside it, ready to send to someone. Uses VACUUM INTO.
  void save_as(const std::string& path) const;

  // Running trials whose writer is gone -> interrupted. Returns how many. The first change calls it.
  int mark_orphaned_trials_interrupted();

  // The file's schema is older than this build's: the first change will migrate it, after which
  // older Tunebench builds call the file newer. Ask before changing such a file.
  bool needs_upgrade() const;
  // Migrates an older schema, switches to WAL and marks orphaned trials; every change (and
  // TrialWriter, and the importer) calls it first. Throws StoreError on a read-only store.
  void prepare_for_writing();

  const std::string& path() const { return m_path; }
  bool read_only() const { return m_read_only; }
  // The connection, for TrialWriter and the importer inside core/store.
  SQLite::Database& database() { return *m_db; }

 private:
  SessionStore(std::string path, std::unique_ptr<SQLite::Database> db, bool read_only, int version);
  void require_writable(const char* what);
  void migrate_if_older();
  int file_version() const;  // PRAGMA user_version now (a TrialWriter's connection may migrate)
  int mark_orphans();

  std::string m_path;
  std::unique_ptr<SQLite::Database> m_db;
  bool m_read_only = false;
  bool m_prepared = false;  // prepare_for_writing() ran
  int m_version = 0;
};

}  // namespace tunebench::store
