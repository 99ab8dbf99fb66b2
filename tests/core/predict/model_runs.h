// Worker event logs recorded on one H200 (tests/data/models-h200), read as one row each: the run's
// name, configuration, median measured step and allocator peak. The predictions' tests
// (recorded_models_test.cpp) and the checks of the evidence (tests/evidence) read them the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"

namespace tunebench::test_data {

struct ModelRun {
  std::string name;  // the log's file name without .jsonl
  config::TrialConfig config;
  double step_ms = 0;      // median of the measured steps
  int64_t peak_bytes = 0;  // the allocator's peak: the largest phase peak the worker logged
};

// The runs were made with TUNEBENCH_MEMORY_PHASES=1, which resets the allocator's peak at every
// phase boundary and logs each phase's peak: the step's peak is the largest of them.
inline int64_t logged_peak(const protocol::RankLog& rank) {
  static const std::regex phase(R"((\w+) peak (\d+) then (\d+);)");
  int64_t peak = 0;
  for (const auto& log : rank.logs)
    for (std::sregex_iterator it(log.value.message.begin(), log.value.message.end(), phase), end; it != end; ++it)
      peak = std::max<int64_t>(peak, std::stoll((*it)[2].str()));
  for (const auto& s : rank.steps) peak = std::max(peak, s.memory.peak_bytes);
  return peak;
}

// The event logs directly in tests/data/<folder> (not its subfolders), by name.
inline std::vector<ModelRun> model_runs(const std::string& folder = "models-h200") {
  namespace fs = std::filesystem;
  std::vector<ModelRun> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(TUNEBENCH_TEST_DATA_DIR) + "/" + folder))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const auto log = protocol::read_trial_log_file(f.string());
    ModelRun r;
    r.name = f.stem().string();
    r.config = config::from_json(log.config()).config;
    std::vector<double> steps;
    for (const auto* s : log.measured_steps(0)) steps.push_back(s->step_ms);
    std::sort(steps.begin(), steps.end());
    r.step_ms = steps.empty() ? 0 : (steps[(steps.size() - 1) / 2] + steps[steps.size() / 2]) / 2;
    r.peak_bytes = logged_peak(log.ranks.at(0));
    out.push_back(r);
  }
  return out;
}

// The event logs of several folders of tests/data, in that order.
inline std::vector<ModelRun> runs_in(const std::vector<std::string>& folders) {
  std::vector<ModelRun> out;
  for (const auto& folder : folders)
    for (auto& r : model_runs(folder)) out.push_back(std::move(r));
  return out;
}

}  // namespace tunebench::test_data
