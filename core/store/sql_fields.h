// The protocol's field lists (protocol/event_fields.h) as SQL: column names, binds and typed reads.
//
// EventInserter builds its INSERT statements and binds from here and trial_loader its SELECTs
// and reads, so a record's columns are named once. Internal to core/store.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/protocol/event_fields.h"
#include "core/store/limits.h"
#include "core/store/row_reader.h"
#include "core/store/store_error.h"

namespace tunebench::store {

// ---- columns --------------------------------------------------------------------------------------

// The record's columns in its table, in field order (fields stored elsewhere are skipped).
template <class Record>
std::vector<std::string> sql_columns() {
  std::vector<std::string> out;
  const Record record{};
  protocol::visit_fields(record, [&](const protocol::Field& f, const auto&) {
    if (f.stored_in_row()) out.emplace_back(f.sql_column());
  });
  return out;
}

// "a, b, c" of sql_columns<Record>(), each prefixed with `alias.` when given.
template <class Record>
std::string sql_column_list(const std::string& alias = "") {
  std::string out;
  for (const auto& c : sql_columns<Record>()) out += (out.empty() ? "" : ", ") + (alias.empty() ? c : alias + "." + c);
  return out;
}

// ---- binding --------------------------------------------------------------------------------------

inline void bind_text(SQLite::Statement& q, int index, const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes)
    q.bind(index, s);
  else
    q.bind(index, bounded(s, max_bytes));
}

// A JSON document, dumped with invalid UTF-8 replaced (dump() would throw on it); "{}" when it is
// larger than the store accepts.
inline void bind_json(SQLite::Statement& q, int index, const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  q.bind(index, text.size() <= kMaxJsonBytes ? text : std::string("{}"));
}

namespace detail {

inline void bind_value(SQLite::Statement& q, int i, int64_t v) { q.bind(i, v); }
inline void bind_value(SQLite::Statement& q, int i, int v) { q.bind(i, v); }
inline void bind_value(SQLite::Statement& q, int i, double v) { q.bind(i, v); }
inline void bind_value(SQLite::Statement& q, int i, bool v) { q.bind(i, v ? 1 : 0); }
inline void bind_value(SQLite::Statement& q, int i, const std::string& v) { bind_text(q, i, v, kMaxShortTextBytes); }
inline void bind_value(SQLite::Statement& q, int i, protocol::Lane v) { q.bindNoCopy(i, to_string(v).data()); }
inline void bind_value(SQLite::Statement& q, int i, protocol::Phase v) { q.bindNoCopy(i, to_string(v).data()); }
inline void bind_value(SQLite::Statement& q, int i, protocol::MemoryPoint v) { q.bindNoCopy(i, to_string(v).data()); }
inline void bind_value(SQLite::Statement& q, int i, const nlohmann::json& v) { bind_json(q, i, v); }
inline void bind_value(SQLite::Statement& q, int i, const std::map<std::string, std::string>& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) j[bounded(k, kMaxShortTextBytes)] = bounded(v, kMaxShortTextBytes);
  bind_json(q, i, j);
}
template <class T>
void bind_value(SQLite::Statement& q, int i, const std::optional<T>& v) {
  if (v)
    bind_value(q, i, *v);
  else
    q.bind(i);
}
template <class T>
void bind_value(SQLite::Statement&, int, const std::vector<T>&) {}  // never a column

}  // namespace detail

// Binds `leading` (ids, rank, time) to parameters 1.., then the record's columns.
template <class Record>
void bind_record(SQLite::Statement& q, const Record& record, std::initializer_list<int64_t> leading) {
  int index = 1;
  for (const int64_t v : leading) q.bind(index++, v);
  protocol::visit_fields(record, [&](const protocol::Field& f, const auto& value) {
    if (f.stored_in_row()) detail::bind_value(q, index++, value);
  });
}

// ---- reading --------------------------------------------------------------------------------------

namespace detail {

inline void read_value(const RowReader& r, int c, const protocol::Field& f, int64_t& out) { out = r.i64(c, f.range); }
inline void read_value(const RowReader& r, int c, const protocol::Field& f, int& out) {
  out =
      static_cast<int>(r.i64(c, {std::max<int64_t>(f.range.lo, INT32_MIN), std::min<int64_t>(f.range.hi, INT32_MAX)}));
}
inline void read_value(const RowReader& r, int c, const protocol::Field&, double& out) { out = r.real(c); }
inline void read_value(const RowReader& r, int c, const protocol::Field&, bool& out) { out = r.flag(c); }
inline void read_value(const RowReader& r, int c, const protocol::Field&, std::string& out) {
  out = r.text(c, kMaxShortTextBytes);
}
inline void read_value(const RowReader& r, int c, const protocol::Field& f, protocol::Lane& out) {
  const auto lane = protocol::lane_from_string(r.text(c, 32));
  if (!lane) throw StoreError("the session file has an interval with an unknown " + std::string(f.name));
  out = *lane;
}
inline void read_value(const RowReader& r, int c, const protocol::Field& f, protocol::Phase& out) {
  const auto phase = protocol::phase_from_string(r.text(c, 32));
  if (!phase) throw StoreError("the session file has an interval with an unknown " + std::string(f.name));
  out = *phase;
}
inline void read_value(const RowReader& r, int c, const protocol::Field& f, protocol::MemoryPoint& out) {
  const auto point = protocol::memory_point_from_string(r.text(c, 32));
  if (!point) throw StoreError("the session file has a memory timeline with an unknown " + std::string(f.name));
  out = *point;
}
inline void read_value(const RowReader& r, int c, const protocol::Field&, nlohmann::json& out) { out = r.json(c); }
inline void read_value(const RowReader& r, int c, const protocol::Field& f, std::map<std::string, std::string>& out) {
  const nlohmann::json j = r.json(c);
  if (!j.is_object()) throw StoreError("the session file has a bad " + std::string(f.sql_column()) + " record");
  for (const auto& [k, v] : j.items())
    if (v.is_string()) out[k] = v.get<std::string>();
}
inline void read_value(const RowReader& r, int c, const protocol::Field& f, std::optional<int64_t>& out) {
  out = r.opt_i64(c, f.range);
}
inline void read_value(const RowReader& r, int c, const protocol::Field&, std::optional<double>& out) {
  out = r.opt_real(c);
}
template <class T>
void read_value(const RowReader&, int, const protocol::Field&, std::vector<T>&) {}

}  // namespace detail

// Reads the record's columns starting at result column `first` (as listed by sql_columns).
template <class Record>
void read_record(const RowReader& r, int first, Record& record) {
  int column = first;
  protocol::visit_fields(record, [&](const protocol::Field& f, auto& value) {
    if (f.stored_in_row()) detail::read_value(r, column++, f, value);
  });
}

}  // namespace tunebench::store
