// The plans table (schema 5): rows written and read with the store's bounds and type checks.
#include "core/store/plans.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/protocol/events.h"
#include "core/store/limits.h"
#include "core/store/row_reader.h"
#include "core/store/session_store.h"
#include "core/store/connection.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

bool has_plans(SessionStore& store) { return store.info().schema_version >= 5; }

// Writing migrates an older file first (the store's rule for every change).
void require(SessionStore& store, const char* what) {
  if (store.read_only()) throw StoreError(store.path() + " is open read-only: cannot " + what);
  store.prepare_for_writing();
  if (!has_plans(store)) throw StoreError(store.path() + " predates plans (schema 5): cannot " + std::string(what));
}

std::string bounded_json(const nlohmann::json& j) {
  std::string text = j.dump();
  if (text.size() > kMaxJsonBytes) throw StoreError("a plan's JSON is larger than 4 MiB");
  return text;
}

template <class F> auto guarded(SessionStore& store, const char* what, F&& f) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(store.path() + ": cannot " + what, e);
  } catch (const nlohmann::json::exception&) {
    throw StoreError(store.path() + ": cannot " + what + ": a plan stored in it is not valid JSON");
  }
}

PlanRecord read_row(SQLite::Statement& q) {
  RowReader r(q, "plans");
  PlanRecord p;
  p.id = r.i64(0);
  p.kind = r.text(1, kMaxShortTextBytes);
  p.baseline_trial = r.opt_i64(2);
  p.created_us = r.i64(3);
  const auto state = plan_state_from_string(r.text(4, kMaxShortTextBytes));
  if (!state) throw StoreError("the session file has a plan with an unknown state");
  p.state = *state;
  p.spec = r.json(5);
  if (!r.text(6, 1).empty()) p.result = r.json(6);
  return p;
}

constexpr const char* kSelect = "SELECT id, kind, baseline_trial, created_us, state, spec, result FROM plans";

}  // namespace

std::string_view to_string(PlanState state) {
  switch (state) {
    case PlanState::Planned: return "planned";
    case PlanState::Running: return "running";
    case PlanState::Paused: return "paused";
    case PlanState::Done: return "done";
  }
  return "planned";
}

std::optional<PlanState> plan_state_from_string(std::string_view text) {
  for (const PlanState s : {PlanState::Planned, PlanState::Running, PlanState::Paused, PlanState::Done})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

int64_t add_plan(SessionStore& store, const std::string& kind, std::optional<int64_t> baseline_trial,
                 const nlohmann::json& spec) {
  require(store, "add a plan");
  return guarded(store, "add a plan", [&] {
    SQLite::Statement q(store.database(),
                        "INSERT INTO plans (kind, baseline_trial, created_us, state, spec) VALUES (?, ?, ?, ?, ?)");
    q.bind(1, bounded(kind, kMaxShortTextBytes));
    if (baseline_trial) q.bind(2, *baseline_trial);
    else q.bind(2);
    q.bind(3, protocol::now_us());
    q.bind(4, std::string(to_string(PlanState::Planned)));
    q.bind(5, bounded_json(spec));
    q.exec();
    return store.database().getLastInsertRowid();
  });
}

void set_plan_state(SessionStore& store, int64_t id, PlanState state) {
  require(store, "change a plan");
  guarded(store, "change a plan", [&] {
    SQLite::Statement q(store.database(), "UPDATE plans SET state = ? WHERE id = ?");
    q.bind(1, std::string(to_string(state)));
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError(store.path() + " has no plan " + std::to_string(id));
  });
}

void set_plan_result(SessionStore& store, int64_t id, const nlohmann::json& result) {
  require(store, "store a plan's result");
  guarded(store, "store a plan's result", [&] {
    SQLite::Statement q(store.database(), "UPDATE plans SET result = ? WHERE id = ?");
    q.bind(1, bounded_json(result));
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError(store.path() + " has no plan " + std::to_string(id));
  });
}

std::vector<PlanRecord> list_plans(SessionStore& store) {
  std::vector<PlanRecord> out;
  if (!has_plans(store)) return out;
  return guarded(store, "read the plans", [&] {
    SQLite::Statement q(store.database(), std::string(kSelect) + " ORDER BY id");
    while (q.executeStep()) out.push_back(read_row(q));
    return out;
  });
}

std::optional<PlanRecord> find_plan(SessionStore& store, int64_t id) {
  if (!has_plans(store)) return std::nullopt;
  return guarded(store, "read a plan", [&]() -> std::optional<PlanRecord> {
    SQLite::Statement q(store.database(), std::string(kSelect) + " WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return read_row(q);
  });
}

}  // namespace tunebench::store
