#include "ui/windows/trace_merge.h"

namespace tunebench::ui {

nlohmann::json merge_chrome_traces(const std::vector<std::pair<std::string, nlohmann::json>>& traces) {
  if (traces.size() == 1) return traces.front().second;  // one trial: exactly the store's trace
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < traces.size(); ++i) {
    const auto& [name, trace] = traces[i];
    if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) continue;
    for (nlohmann::json e : trace["traceEvents"]) {
      const int64_t rank = e.value("pid", int64_t{0});
      e["pid"] = int64_t(1000) * int64_t(i) + rank;
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
        e["args"]["name"] = name + " \u00b7 rank " + std::to_string(rank);
      events.push_back(std::move(e));
    }
    // Trials in the order selected, ranks in order within each.
    for (const auto& e : trace["traceEvents"])
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
        const int64_t pid = int64_t(1000) * int64_t(i) + e.value("pid", int64_t{0});
        events.push_back(
            {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
      }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace tunebench::ui
