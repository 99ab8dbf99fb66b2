#include "core/investigate/headless_executor.h"

#include "core/launch/headless_run.h"

namespace tunebench::investigate {

TrialExecutor headless_executor(const std::string& session_path, const std::string& worker, const std::string& source,
                                double timeout_s, std::function<bool()> cancelled) {
  return [=](const TrialRequest& r) {
    launch::HeadlessRequest h;
    h.session_path = session_path;
    h.config = r.config;
    h.name = r.name;
    h.source = source;
    h.tags = r.tags;
    h.worker = worker;
    h.timeout_s = timeout_s;
    h.cancelled = cancelled;
    const auto res = launch::run_trial(h);
    TrialOutcome out;
    out.trial_id = res.trial_id > 0 ? res.trial_id : 0;
    out.exit_code = res.end.exit_code;
    out.status = res.end.status;
    out.message = res.message;
    return out;
  };
}

}  // namespace tunebench::investigate
