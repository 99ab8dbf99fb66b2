#include "app/cli/plan_executor.h"

#include <csignal>
#include <iostream>

#include "core/investigate/headless_executor.h"

namespace tunebench::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

const std::atomic<bool>* install_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  return &g_stop;
}

investigate::TrialExecutor cli_executor(const std::string& session_path, const std::string& worker,
                                        const std::string& source, double timeout_s, const std::atomic<bool>* cancelled) {
  auto run = investigate::headless_executor(session_path, worker, source, timeout_s,
                                            [cancelled] { return cancelled && cancelled->load(); });
  return [run](const investigate::TrialRequest& r) {
    const auto out = run(r);
    std::cerr << "    trial " << out.trial_id << ": " << protocol::to_string(out.status)
              << (out.message.empty() ? "" : " (" + out.message + ")") << "\n";
    return out;
  };
}

}  // namespace tunebench::cli
