// The TrialExecutor of headless drivers (the CLI, the tests): each requested trial runs through
// launch::run_trial, the one headless launcher, into the plan's session with the request's tags.
#pragma once

#include <functional>
#include <string>

#include "core/investigate/trial_executor.h"

namespace tunebench::investigate {

// `cancelled` (may be empty) is polled while a trial runs; true stops its ranks.
TrialExecutor headless_executor(const std::string& session_path, const std::string& worker, const std::string& source,
                                double timeout_s, std::function<bool()> cancelled = {});

}  // namespace tunebench::investigate
