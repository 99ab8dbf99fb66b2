#include "core/investigate/plan.h"

#include <array>
#include <stdexcept>

namespace tunebench::investigate {
namespace {

constexpr std::array<std::pair<Category, std::string_view>, 5> kNames = {{{Category::Data, "data"},
                                                                          {Category::Communication, "communication"},
                                                                          {Category::Batch, "batch"},
                                                                          {Category::Memory, "memory"},
                                                                          {Category::Compute, "compute"}}};

nlohmann::json changes_json(const std::vector<analysis::KnobChange>& changes) {
  auto a = nlohmann::json::array();
  for (const auto& c : changes) a.push_back({{"key", c.key}, {"value", c.value}});
  return a;
}

std::vector<analysis::KnobChange> changes_of(const nlohmann::json& a) {
  std::vector<analysis::KnobChange> out;
  for (const auto& c : a) out.push_back({c.at("key").get<std::string>(), c.at("value").get<std::string>()});
  return out;
}

config::TrialConfig config_of(const nlohmann::json& j) {
  auto parsed = config::from_json(j);
  if (!parsed.ok()) throw std::runtime_error("a plan's config does not parse: " + config::describe(parsed.problems));
  return parsed.config;
}

}  // namespace

std::string_view to_string(Category c) {
  for (const auto& [k, n] : kNames)
    if (k == c) return n;
  return "compute";
}

Category category_from_string(std::string_view text) {
  for (const auto& [k, n] : kNames)
    if (n == text) return k;
  throw std::runtime_error("unknown factor category '" + std::string(text) + "'");
}

nlohmann::json to_json(const InvestigationPlan& plan) {
  nlohmann::json j;
  j["baseline_trial"] = plan.baseline_trial;
  j["baseline"] = config::to_json(plan.baseline);
  j["diagnosis"] = plan.diagnosis;
  j["variants"] = nlohmann::json::array();
  for (const auto& v : plan.variants)
    j["variants"].push_back({{"arm", v.arm},
                             {"title", v.title},
                             {"category", to_string(v.category)},
                             {"source", v.source},
                             {"why", v.why},
                             {"changes", changes_json(v.changes)},
                             {"config", config::to_json(v.config)}});
  j["skipped"] = nlohmann::json::array();
  for (const auto& s : plan.skipped)
    j["skipped"].push_back({{"title", s.title},
                            {"category", to_string(s.category)},
                            {"source", s.source},
                            {"changes", changes_json(s.changes)},
                            {"reason", s.reason}});
  return j;
}

InvestigationPlan plan_from_json(const nlohmann::json& j) {
  try {
    InvestigationPlan p;
    p.baseline_trial = j.at("baseline_trial").get<int64_t>();
    p.baseline = config_of(j.at("baseline"));
    p.diagnosis = j.value("diagnosis", "");
    for (const auto& v : j.at("variants"))
      p.variants.push_back({v.at("arm").get<std::string>(), v.at("title").get<std::string>(),
                            category_from_string(v.at("category").get<std::string>()), v.value("source", ""),
                            v.value("why", ""), changes_of(v.at("changes")), config_of(v.at("config"))});
    for (const auto& s : j.at("skipped"))
      p.skipped.push_back({s.at("title").get<std::string>(), category_from_string(s.at("category").get<std::string>()),
                           s.value("source", ""), changes_of(s.at("changes")), s.value("reason", "")});
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not an investigation plan: ") + e.what());
  }
}

}  // namespace tunebench::investigate
