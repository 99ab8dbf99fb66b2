// Logs for the comparison tests: the recorded-shape forum example (RTX 4090 single vs DDP x2) and
// variants of it with one knob changed, as a sweep would produce.
#pragma once

#include <string>

#include "core/protocol/trial_log.h"

namespace tunebench::ui::test {

inline protocol::TrialLog forum_log(const char* file) {
  return protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) + "/analysis/" + file);
}

// `log` with one config knob set to `value` in every rank's hello and a new trial id.
template <class T>
protocol::TrialLog with_knob(protocol::TrialLog log, const std::string& key, const T& value, const std::string& trial) {
  log.trial = trial;
  for (auto& [rank, r] : log.ranks)
    if (r.hello) {
      r.hello->config[key] = value;
      r.hello->config["name"] = trial;
    }
  return log;
}

}  // namespace tunebench::ui::test
