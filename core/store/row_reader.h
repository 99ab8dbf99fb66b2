// Type-checked reading of one result row from a session file.
//
// A session may come from anyone and SQLite columns accept any type, so every value is checked
// with its storage class (sqlite3_column_type, i.e. typeof()) before use: an integer where text
// belongs, a blob anywhere, a NULL in a required field or unparsable JSON all become a StoreError
// naming the table and column, and so does a number outside the range its protocol field allows.
// Text is repaired to valid UTF-8 and bounded to the caller's limit. This class deliberately
// does not run queries; it only reads the row the statement is on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/protocol/event_fields.h"

namespace SQLite {
class Statement;
}

namespace tunebench::store {

class RowReader {
 public:
  RowReader(SQLite::Statement& statement, const char* table) : m_q(statement), m_table(table) {}

  int64_t i64(int column) const;
  int64_t i64(int column, protocol::IntRange range) const;  // an integer inside `range`
  int i32(int column) const;  // an integer that must fit in int
  bool flag(int column) const;  // 0 or 1
  // REAL, or INTEGER widened; finite and at most protocol::kMaxReal in magnitude.
  double real(int column) const;
  std::optional<int64_t> opt_i64(int column, protocol::IntRange range = {}) const;
  std::optional<double> opt_real(int column) const;
  // Valid UTF-8 (bad bytes become U+FFFD), at most max_bytes.
  std::string text(int column, size_t max_bytes) const;
  // Text holding JSON; nesting deeper than 64 levels is refused before parsing (a crafted value
  // must not exhaust the stack when later dumped).
  nlohmann::json json(int column) const;

 private:
  [[noreturn]] void fail(int column, const std::string& what) const;
  int type(int column) const;

  SQLite::Statement& m_q;
  const char* m_table;
};


}  // namespace tunebench::store
