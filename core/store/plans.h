// Plans of core/investigate kept in the session: an investigation of one trial or an autotune
// search, as its spec (JSON), its state and its result (JSON).
//
// A plan's trials are ordinary trials tagged "plan:<id>" (see core/investigate/plan_tags.h), so
// the plan row holds only what the trials cannot say: the planned variants, the skipped ones and
// the options. Files older than schema 5 have no plans table: reading one gives no plans, and
// writing is refused until the file is opened read-write (which migrates it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::store {

class SessionStore;

struct PlanRecord {
  int64_t id = 0;
  std::string kind;                      // "investigate" | "tune"
  std::optional<int64_t> baseline_trial; // the investigated trial (investigate only)
  int64_t created_us = 0;
  std::string state;                     // "planned" | "running" | "done" | "cancelled"
  nlohmann::json spec = nlohmann::json::object();
  nlohmann::json result;                 // null until a result was written
};

int64_t add_plan(SessionStore& store, const std::string& kind, std::optional<int64_t> baseline_trial,
                 const nlohmann::json& spec);
void set_plan_state(SessionStore& store, int64_t id, const std::string& state);
void set_plan_result(SessionStore& store, int64_t id, const nlohmann::json& result);
std::vector<PlanRecord> list_plans(SessionStore& store);  // oldest first
std::optional<PlanRecord> find_plan(SessionStore& store, int64_t id);

}  // namespace tunebench::store
