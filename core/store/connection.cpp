// Connection hardening. Why each setting:
// - DEFENSIVE: no writable_schema, no direct writes to shadow tables, so a crafted statement (we
//   have none, but belt and braces) cannot corrupt the file deliberately.
// - TRUSTED_SCHEMA off: functions and virtual tables named in the schema may not run with side
//   effects; with triggers and views disabled as well, nothing stored in a file is ever executed.
// - No extension loading: a file cannot get code loaded into the GUI.
// - Limits: a hostile file's huge values make reads fail with SQLITE_TOOBIG instead of allocating
//   gigabytes; no ATTACH; small expression depth and SQL length (our statements are short).
// - mmap off: SQLite's advice for untrusted files (a truncated mapped file can raise SIGBUS).
#include "core/store/connection.h"

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/limits.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

void db_config(sqlite3* handle, int option, int value, const char* name) {
  int applied = -1;
  if (sqlite3_db_config(handle, option, value, &applied) != SQLITE_OK || applied != value)
    throw StoreError(std::string("SQLite refused the safety setting ") + name);
}

void harden(SQLite::Database& db, bool writable) {
  sqlite3* h = db.getHandle();
  db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, "DEFENSIVE");
  db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, "TRUSTED_SCHEMA");
  db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, "ENABLE_LOAD_EXTENSION");
  db_config(h, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, "ENABLE_TRIGGER");
  db_config(h, SQLITE_DBCONFIG_ENABLE_VIEW, 0, "ENABLE_VIEW");
  db_config(h, SQLITE_DBCONFIG_DQS_DDL, 0, "DQS_DDL");
  db_config(h, SQLITE_DBCONFIG_DQS_DML, 0, "DQS_DML");
  // Cascading deletes of a trial's rows rely on foreign keys.
  db_config(h, SQLITE_DBCONFIG_ENABLE_FKEY, writable ? 1 : 0, "ENABLE_FKEY");
  sqlite3_enable_load_extension(h, 0);

  sqlite3_limit(h, SQLITE_LIMIT_LENGTH, kSqliteMaxValueBytes);
  sqlite3_limit(h, SQLITE_LIMIT_SQL_LENGTH, 100000);
  sqlite3_limit(h, SQLITE_LIMIT_COLUMN, 100);
  sqlite3_limit(h, SQLITE_LIMIT_EXPR_DEPTH, 100);
  sqlite3_limit(h, SQLITE_LIMIT_COMPOUND_SELECT, 4);
  sqlite3_limit(h, SQLITE_LIMIT_VDBE_OP, 100000);
  sqlite3_limit(h, SQLITE_LIMIT_FUNCTION_ARG, 8);
  sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(h, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100);
  sqlite3_limit(h, SQLITE_LIMIT_VARIABLE_NUMBER, 100);
  // Foreign-key cascades count as trigger levels: trials -> steps -> intervals needs a few.
  sqlite3_limit(h, SQLITE_LIMIT_TRIGGER_DEPTH, 8);
  sqlite3_limit(h, SQLITE_LIMIT_WORKER_THREADS, 0);

  db.exec("PRAGMA trusted_schema = OFF");
  db.exec("PRAGMA mmap_size = 0");
  db.exec("PRAGMA cell_size_check = ON");
}

}  // namespace

std::string describe_sqlite_error(int code) {
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
      return "the file is damaged (its pages do not read back as a database)";
    case SQLITE_IOERR:
      return "reading or writing the file failed (a disk error, or the file was changed or removed underneath)";
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "another program holds the file locked; try again in a moment";
    case SQLITE_READONLY: return "the file or its folder is write-protected";
    case SQLITE_CANTOPEN: return "the file cannot be opened (a missing folder, or no permission)";
    case SQLITE_PERM:
    case SQLITE_AUTH: return "no permission to do that";
    case SQLITE_NOMEM: return "out of memory";
    case SQLITE_TOOBIG: return "a value in the file is larger than Tunebench accepts";
    case SQLITE_CONSTRAINT: return "the change conflicts with what the file holds";
    case SQLITE_SCHEMA: return "the file's layout changed while it was read; open it again";
    default: return "SQLite failed in a way Tunebench has no sentence for (the log or Details has its words)";
  }
}

namespace {
// What the user can do about a failure of this kind ("" where the description says it already).
std::string remedy(int code) {
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT: return " Open a backup, or ask its sender for the file again.";
    case SQLITE_IOERR: return " Check that the disk and the file are still there, then open the session again.";
    case SQLITE_FULL: return " Free some space and try again.";
    case SQLITE_READONLY: return " Open it read-only, or save a copy where you may write.";
    default: return "";
  }
}
}  // namespace

StoreError sqlite_failure(const std::string& context, const SQLite::Exception& e, const std::string& after) {
  const int code = e.getExtendedErrorCode();
  return StoreError(context + ": " + describe_sqlite_error(code) + "." + remedy(code) + after,
                    "SQLite: " + std::string(e.what()) + " (extended code " + std::to_string(code) + ")");
}

bool is_locked_error(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

std::unique_ptr<SQLite::Database> open_connection(const std::string& path, OpenMode mode,
                                                  std::chrono::milliseconds busy_timeout) {
  int flags = SQLite::OPEN_READONLY;
  if (mode == OpenMode::ReadWrite) flags = SQLite::OPEN_READWRITE;
  if (mode == OpenMode::Create) flags = SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE;
  try {
    auto db = std::make_unique<SQLite::Database>(path, flags);
    harden(*db, mode != OpenMode::ReadOnly);
    // A live writer in another process holds the write lock for a few milliseconds per batch.
    db->setBusyTimeout(static_cast<int>(busy_timeout.count()));
    return db;
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure("cannot open " + path, e);
  }
}

void configure_for_writing(SQLite::Database& db) {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
}

}  // namespace tunebench::store
