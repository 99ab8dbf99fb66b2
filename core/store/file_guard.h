// Deciding whether a file is a Tunebench session we may open, before anything is changed.
//
// Two stages. check_file_header() reads the first 100 bytes itself, so a text file, a foreign
// SQLite database or a newer session is refused before SQLite parses a single page.
// check_session_database() then inspects a read-only, hardened connection: integrity, application
// id, schema version and a schema identical to ours (no planted triggers, views or tables).
// Neither stage writes anything. This unit deliberately does not migrate: SessionStore does,
// and only after both stages passed.
#pragma once

#include <cstdint>
#include <string>

namespace SQLite {
class Database;
}

namespace tunebench::store {

struct FileHeader {
  int64_t size_bytes = 0;
  int32_t application_id = 0;
  int32_t user_version = 0;
};

// The first `max_bytes` bytes of a file (fewer when it is shorter), read without a descriptor of
// our own, so that this process's live connections to the same file keep their locks (see the
// .cpp). Every raw read of a file that may be a session goes through here. Throws StoreError when
// it cannot be read.
std::string read_file_prefix(const std::string& path, size_t max_bytes);

// Throws StoreError naming the path and the reason: missing, not a regular file, empty, larger
// than max_file_bytes, not SQLite, truncated, not a Tunebench session, newer schema.
FileHeader check_file_header(const std::string& path, int64_t max_file_bytes);

// Returns the schema version. Throws StoreError for corruption, a foreign or newer database and
// any schema object that differs from what Tunebench creates.
int check_session_database(SQLite::Database& db, const std::string& path, bool full_check);

}  // namespace tunebench::store
