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
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::store {

class SessionStore;

// Where a plan stands (core/investigate/plan_driver.h moves it): Planned until first started,
// Running while a front end drives it, Paused when it stopped before its end (Cancel, a stopped
// trial, a refusal or a failure: Start resumes it), Done when nothing within its budget is left.
enum class PlanState { Planned, Running, Paused, Done };
std::string_view to_string(PlanState state);
std::optional<PlanState> plan_state_from_string(std::string_view text);

struct PlanRecord {
  int64_t id = 0;
  std::string kind;                      // "investigate" | "tune"
  std::optional<int64_t> baseline_trial; // the investigated trial (investigate only)
  int64_t created_us = 0;
  PlanState state = PlanState::Planned;
  nlohmann::json spec = nlohmann::json::object();
  nlohmann::json result;                 // null until a result was written
};

int64_t add_plan(SessionStore& store, const std::string& kind, std::optional<int64_t> baseline_trial,
                 const nlohmann::json& spec);
void set_plan_state(SessionStore& store, int64_t id, PlanState state);
void set_plan_result(SessionStore& store, int64_t id, const nlohmann::json& result);
std::vector<PlanRecord> list_plans(SessionStore& store);  // oldest first
std::optional<PlanRecord> find_plan(SessionStore& store, int64_t id);

}  // namespace tunebench::store
