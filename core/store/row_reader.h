// Type-checked reading of one result row from a session file.
//
// A session may come from anyone and SQLite columns accept any type, so every value is checked
// with its storage class (sqlite3_column_type, i.e. typeof()) before use: an integer where text
// belongs, a blob anywhere, a NULL in a required field or unparsable JSON all become a StoreError
// naming the table and column. Text is bounded to the caller's limit. This class deliberately
// does not run queries; it only reads the row the statement is on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace SQLite {
class Statement;
}

namespace tunebench::store {

class RowReader {
 public:
  RowReader(SQLite::Statement& statement, const char* table) : m_q(statement), m_table(table) {}

  int64_t i64(int column) const;
  int i32(int column) const;  // an integer that must fit in int
  bool flag(int column) const;  // 0 or 1
  double real(int column) const;  // REAL, or INTEGER widened
  std::optional<int64_t> opt_i64(int column) const;
  std::optional<double> opt_real(int column) const;
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
