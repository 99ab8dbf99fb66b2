// How a plan's trial gets run: the one interface between core/investigate and whatever launches
// trials. The CLI implements it with launch::run_trial (headless ranks into the session); the GUI
// feeds the same requests to TrialLauncher/TrialQueue. This file launches nothing itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/protocol/trial_status.h"

namespace tunebench::investigate {

struct TrialRequest {
  config::TrialConfig config;     // validated by the planner
  std::string name;               // trial name in the session
  std::vector<std::string> tags;  // plan_tags.h: which plan, which arm, which repeat
};

struct TrialOutcome {
  int64_t trial_id = 0;  // the stored trial; 0 when nothing was stored
  int exit_code = 0;
  protocol::TrialStatus status = protocol::TrialStatus::Failed;
  std::string message;   // why it failed, for people
};

// Runs one trial to its end and stores it (with the request's tags) in the plan's session.
using TrialExecutor = std::function<TrialOutcome(const TrialRequest&)>;

}  // namespace tunebench::investigate
