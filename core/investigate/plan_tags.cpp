#include "core/investigate/plan_tags.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace tunebench::investigate {

std::string plan_tag(int64_t plan_id) { return "plan:" + std::to_string(plan_id); }

std::string config_key(const config::TrialConfig& config, std::string_view extra) {
  auto j = config::to_json(config);
  j.erase("name");
  const std::string text = j.dump();
  uint64_t h = 1469598103934665603ULL;  // FNV-1a, stable across builds and machines
  for (const std::string_view bytes : {std::string_view(text), extra})
    for (const unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  char b[24];
  std::snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(h));
  return b;
}
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
