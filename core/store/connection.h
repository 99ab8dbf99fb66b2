// Opening SQLite connections to session files with the defensive settings SQLite recommends for
// files of unknown origin (https://www.sqlite.org/security.html).
//
// Every connection the store makes goes through open_connection(), including our own freshly
// created files, so there is exactly one place that decides what a connection may do. This unit
// deliberately does not look at the file's contents: file_guard.h does.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/store/store_error.h"

namespace SQLite {
class Database;
class Exception;
}

namespace tunebench::store {

enum class OpenMode {
  ReadOnly,   // SQLITE_OPEN_READONLY: used to inspect a file before trusting it
  ReadWrite,  // an existing file that passed inspection
  Create,     // a new file (the caller has checked that none exists)
};

// Opens `path` (never as a URI) and hardens the connection: defensive mode, untrusted schema, no
// extension loading, no triggers or views, tight sqlite3_limit()s, no memory-mapped I/O, foreign
// keys on. Another connection's lock is waited for up to `busy_timeout`. Throws StoreError.
std::unique_ptr<SQLite::Database> open_connection(const std::string& path, OpenMode mode,
                                                  std::chrono::milliseconds busy_timeout);

// One sentence in plain words for a failure SQLite reported ("the file is damaged", "the disk is
// full"), never SQLite's own text ("btreeInitPage() returns error code 11"): what a message box
// and the command line say after "cannot …:".
std::string describe_sqlite_error(int sqlite_extended_error_code);

// True for SQLite's "database is locked/busy" failures: the file is fine, someone holds it.
bool is_locked_error(int sqlite_error_code);

// The one place a failure of SQLite becomes a StoreError (every catch in core/store calls it):
// "`context`: <describe_sqlite_error>. <what to do>`after`", e.g. "s.tbsession: cannot load the
// trial: the file is damaged (...). Open a backup, or ask its sender for the file again." SQLite's
// own words and code go to StoreError::details(), for the log or a Details section only.
StoreError sqlite_failure(const std::string& context, const SQLite::Exception& e, const std::string& after = {});

// Settings for a connection that will write: WAL journal, synchronous=NORMAL (a committed
// transaction survives a killed process; only power loss may undo the latest ones), busy timeout.
void configure_for_writing(SQLite::Database& db);

}  // namespace tunebench::store
