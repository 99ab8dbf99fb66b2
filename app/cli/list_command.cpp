// `tunebench-cli list SESSION`: one line per trial (id, status, steps per rank, step time, name, tags).
// The step time is the trial's (analysis/step_time.h: slowest rank per step, median over measured
// steps), the figure the comparison and the report show, not rank 0's own median.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "core/analysis/format.h"
#include "core/analysis/step_time.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

void run_list(const std::string& path) {
  auto store = store::SessionStore::open(path, {store::SessionStore::Mode::ReadOnly});
  const auto info = store.info();
  std::cout << "session '" << info.name << "' (schema " << info.schema_version << ")\n";
  std::printf("%6s  %-11s  %7s  %9s  %s\n", "id", "status", "steps", "step ms", "name");
  std::fflush(stdout);
  for (const auto& t : store.list_trials()) {
    std::string tags;
    for (const auto& tag : t.tags) tags += (tags.empty() ? "  [" : ", ") + tag;
    if (!tags.empty()) tags += "]";
    const protocol::TrialLog steps = t.step_count > 0 ? store.trial_steps(t.id) : protocol::TrialLog{};
    const analysis::Spread step = t.step_count > 0 ? analysis::trial_step_ms(steps) : analysis::Spread{};
    const std::string step_ms = step.empty() ? "-" : analysis::format_fixed(step.median, 1);
    // Steps as the report and the window count them: per rank (the most any rank finished), not
    // step records over all ranks (an 8-step DDP trial has 16).
    const long long per_rank = steps.steps_per_rank();
    std::printf("%6lld  %-11s  %7lld  %9s  %s%s\n", static_cast<long long>(t.id),
                std::string(protocol::to_string(t.status)).c_str(), per_rank, step_ms.c_str(), t.name.c_str(),
                tags.c_str());
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("list", "List the trials of a session");
  cmd->add_option("session", *path, "Session file (.tbsession)")->required();
  cmd->callback([path] { run_list(*path); });
}

}  // namespace tunebench::cli
