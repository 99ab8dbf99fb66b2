#include "core/store/row_reader.h"

#include "core/protocol/event_reader.h"

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <climits>
#include <cmath>

#include "core/store/limits.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

const char* type_name(int type) {
  switch (type) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real number";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
  }
}

}  // namespace

void RowReader::fail(int column, const std::string& what) const {
  throw StoreError(std::string("the session file has a bad value in table ") + m_table +
                   ", column " + m_q.getColumnName(column) + ": " + what);
}

int RowReader::type(int column) const { return m_q.getColumn(column).getType(); }

int64_t RowReader::i64(int column) const {
  const int t = type(column);
  if (t != SQLITE_INTEGER) fail(column, std::string("expected an integer, found ") + type_name(t));
  return m_q.getColumn(column).getInt64();
}

int64_t RowReader::i64(int column, protocol::IntRange range) const {
  const int64_t v = i64(column);
  if (!range.contains(v)) fail(column, "integer out of range (" + std::to_string(v) + ")");
  return v;
}

int RowReader::i32(int column) const {
  const int64_t v = i64(column);
  if (v < INT_MIN || v > INT_MAX) fail(column, "integer out of range");
  return static_cast<int>(v);
}

bool RowReader::flag(int column) const {
  const int64_t v = i64(column);
  if (v != 0 && v != 1) fail(column, "expected 0 or 1");
  return v == 1;
}

double RowReader::real(int column) const {
  const int t = type(column);
  if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
    fail(column, std::string("expected a number, found ") + type_name(t));
  const double v = m_q.getColumn(column).getDouble();
  if (!(std::abs(v) <= protocol::kMaxReal)) fail(column, "number out of range");
  return v;
}

std::optional<int64_t> RowReader::opt_i64(int column, protocol::IntRange range) const {
  if (type(column) == SQLITE_NULL) return std::nullopt;
  return i64(column, range);
}

std::optional<double> RowReader::opt_real(int column) const {
  if (type(column) == SQLITE_NULL) return std::nullopt;
  return real(column);
}

std::string RowReader::text(int column, size_t max_bytes) const {
  const int t = type(column);
  if (t != SQLITE_TEXT) fail(column, std::string("expected text, found ") + type_name(t));
  const auto& col = m_q.getColumn(column);
  const char* p = col.getText();
  const auto n = static_cast<size_t>(col.getBytes());
  return bounded(valid_utf8(std::string_view(p, n)), max_bytes);
}

nlohmann::json RowReader::json(int column) const {
  const std::string s = text(column, kMaxJsonBytes + 1);
  if (s.size() > kMaxJsonBytes) fail(column, "JSON document larger than the limit");
  if (!protocol::json_nesting_within(s, 64)) fail(column, "JSON nested too deeply");
  auto j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(column, "not valid JSON");
  return j;
}


}  // namespace tunebench::store
