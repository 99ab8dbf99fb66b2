#include "core/investigate/plan_tags.h"

#include <algorithm>

namespace tunebench::investigate {

std::string plan_tag(int64_t plan_id) { return "plan:" + std::to_string(plan_id); }
std::string arm_tag(const std::string& arm) { return "arm:" + arm; }

std::optional<std::string> tag_value(const std::vector<std::string>& tags, const std::string& prefix) {
  const std::string p = prefix + ":";
  for (const auto& t : tags)
    if (t.compare(0, p.size(), p) == 0) return t.substr(p.size());
  return std::nullopt;
}

std::map<std::string, std::vector<store::TrialInfo>> finished_arms(const std::vector<store::TrialInfo>& trials,
                                                                   int64_t plan_id) {
  std::map<std::string, std::vector<store::TrialInfo>> out;
  const std::string want = std::to_string(plan_id);
  for (const auto& t : trials) {
    if (t.status != protocol::TrialStatus::Done && t.status != protocol::TrialStatus::Failed) continue;
    if (tag_value(t.tags, "plan") != want) continue;
    if (auto arm = tag_value(t.tags, "arm")) out[*arm].push_back(t);
  }
  for (auto& [arm, list] : out)
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

}  // namespace tunebench::investigate
