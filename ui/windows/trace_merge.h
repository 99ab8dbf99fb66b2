// Several trials' Chrome traces in one file: one process per trial and rank ("NAME · rank N"),
// so Perfetto shows the selected trials one under another on a common time axis (each trial's
// own times start at 0, as store::chrome_trace writes them).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::ui {

// `traces`: (trial name, store::chrome_trace of it). Process ids become 1000 * i + rank.
nlohmann::json merge_chrome_traces(const std::vector<std::pair<std::string, nlohmann::json>>& traces);

}  // namespace tunebench::ui
