// The session file's schema: its versions, the migrations between them, and what a file of ours
// must contain.
//
// Versions only ever add (tables, indexes), never ALTER, so a file migrated from version 1 has the
// very same sqlite_master rows as a file created at the current version. That is what lets
// expected_schema() be built by running the migrations on an empty in-memory database and compared
// row by row with a file we are asked to open. This unit deliberately does no file checks itself:
// see file_guard.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace tunebench::store {

// PRAGMA application_id of every session file: "TBS1" in ASCII.
inline constexpr int32_t kApplicationId = 0x54425331;
// PRAGMA user_version we write. 1: first release. 2: trial tags table, trial status index.
// 3: rank_topology. 4: link_probes (link probe points). 5: plans (investigations, autotune).
// 6: step_gpu (kernel-sampled steps). 7: step_memory (memory by category), gpu_counters (energy, GPM).
// 8: step_memory_timeline (a memory-sampled step's allocated and reserved bytes through its phases).
inline constexpr int kSchemaVersion = 8;

// Applies the migrations from `from_version` (0 = empty database) to `to_version` in one
// transaction, and sets user_version (and application_id when starting from 0).
void migrate(SQLite::Database& db, int from_version, int to_version = kSchemaVersion);

struct SchemaObject {
  std::string type;  // "table" | "index"
  std::string name;
  std::string table;
  std::optional<std::string> sql;  // NULL for automatic indexes
  bool operator==(const SchemaObject& o) const {
    return type == o.type && name == o.name && table == o.table && sql == o.sql;
  }
};

// The sqlite_master rows of a session at `version`, sorted by (type, name).
const std::vector<SchemaObject>& expected_schema(int version);
// The sqlite_master rows of an open database, sorted by (type, name). Throws SQLite::Exception.
std::vector<SchemaObject> read_schema(SQLite::Database& db);

}  // namespace tunebench::store
