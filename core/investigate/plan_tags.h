// The tags that tie stored trials to a plan (store/plans.h): "plan:<id>" on every trial of the
// plan and "arm:<name>" on each (an investigation's baseline or variant, an autotune point and
// rung). Tags are how a plan resumes: what is stored is not run again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/trial_config.h"
#include "core/store/records.h"

namespace tunebench::investigate {

std::string plan_tag(int64_t plan_id);
// 16 hex digits naming a configuration, the same across builds and machines (FNV-1a of its JSON
// without its name, then of `extra`, e.g. a script's content): an autotune point's arm, the tag of
// an investigated script's baseline.
std::string config_key(const config::TrialConfig& config, std::string_view extra = {});
std::string arm_tag(const std::string& arm);
// The value of the first tag "prefix:value" of `tags`, or nullopt.
std::optional<std::string> tag_value(const std::vector<std::string>& tags, const std::string& prefix);

// The finished (done or failed) trials of a plan, by arm, oldest first. Trials still queued,
// running, interrupted or stopped are not counted: a resumed plan runs them again.
std::map<std::string, std::vector<store::TrialInfo>> finished_arms(const std::vector<store::TrialInfo>& trials,
                                                                   int64_t plan_id);

}  // namespace tunebench::investigate
