// An investigation plan: the baseline configuration and its one-factor variants, each with where
// it came from (the diagnosis or the forum's usual suspects) and its category; the variants that
// were not planned, each with the reason (does not fit in memory, invalid, not relevant here).
// Plain data with a JSON round trip: the plan is stored as the spec of a plans row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/diagnosis.h"
#include "core/config/trial_config.h"

namespace tunebench::investigate {

// What a factor is about; the verdict groups by it and a single-rank plan has no Communication.
enum class Category { Data, Communication, Batch, Memory, Compute };
std::string_view to_string(Category c);
Category category_from_string(std::string_view text);

inline constexpr const char* kBaselineArm = "base";

struct Variant {
  std::string arm;                           // "v1", "v2", ...: the trials' arm tag
  std::string title;                         // "num_workers 4"
  Category category = Category::Compute;
  std::string source;                        // "diagnosis: data-bound" | "forum: ..."
  std::string why;                           // the expected effect
  std::vector<analysis::KnobChange> changes; // applied to the baseline
  config::TrialConfig config;                // the baseline with the changes, validated
};

struct SkippedVariant {
  std::string title;
  Category category = Category::Compute;
  std::string source;
  std::vector<analysis::KnobChange> changes;
  std::string reason;  // "predicted 151.2 GiB per device, 139.8 GiB available", "invalid: ..."
};

struct InvestigationPlan {
  int64_t baseline_trial = 0;     // the investigated trial (0: none stored)
  config::TrialConfig baseline;   // as re-run (steps as planned)
  std::string diagnosis;          // the baseline's diagnosis verdict when planned
  std::vector<Variant> variants;  // diagnosis first, then the forum's suspects
  std::vector<SkippedVariant> skipped;
};

nlohmann::json to_json(const InvestigationPlan& plan);
// Throws std::runtime_error when the JSON is not a plan (a damaged or foreign row).
InvestigationPlan plan_from_json(const nlohmann::json& j);

}  // namespace tunebench::investigate
