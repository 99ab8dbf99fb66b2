// The CLI's TrialExecutor for investigations and autotune searches: investigate::headless_executor
// (launch::run_trial into the session) with one result line per trial on stderr. Ctrl+C stops the
// running trial and the plan, which the same command resumes.
#pragma once

#include <atomic>
#include <string>

#include "core/investigate/trial_executor.h"

namespace tunebench::cli {

investigate::TrialExecutor cli_executor(const std::string& session_path, const std::string& worker,
                                        const std::string& source, double timeout_s, const std::atomic<bool>* cancelled);
// SIGINT/SIGTERM set the returned flag instead of killing the CLI (the trial is then stopped).
const std::atomic<bool>* install_stop_signals();

}  // namespace tunebench::cli
