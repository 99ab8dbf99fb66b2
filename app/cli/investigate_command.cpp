// `tunebench-cli investigate SESSION TRIAL`: plan one-factor variants of a stored trial, run them
// headless within a budget, and print the attribution table and verdict (core/investigate).
// Run again to resume: what is stored is not run twice.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/config_inputs.h"
#include "app/cli/trial_inputs.h"
#include "app/cli/plan_executor.h"
#include "core/investigate/investigation.h"
#include "core/investigate/plan_run.h"
#include "core/investigate/plan_tags.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

struct InvestigateOptions {
  std::string session, worker;
  int64_t trial = 0;
  int budget = 0;
  double budget_minutes = 0;
  int64_t steps = 0, warmup = -1;
  int baseline_repeats = 2, max_repeats = 2;
  double timeout_s = 0, device_memory_gib = 0;
  bool json = false, fresh = false, plan_only = false;
  ScriptInputs script;  // --script FILE ... -- ARGS: the baseline is that script, run first
  std::vector<std::string> sets;
};

// Your own script as the baseline: run once (or found from an earlier run of the same command, so
// a paused plan resumes around the same trial) and stored with a tag of its configuration and of
// the script's content (an edited script is a new baseline).
int64_t script_baseline(const InvestigateOptions& o) {
  const config::TrialConfig c = config_from_inputs("", "", o.sets, "", o.script);
  std::ifstream in(c.script, std::ios::binary);
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string tag = "baseline-of-script:" + investigate::config_key(c, content);
  if (std::filesystem::exists(o.session)) {
    auto s = store::SessionStore::open(o.session, {store::SessionStore::Mode::ReadOnly});
    int64_t found = 0;
    for (const auto& t : s.list_trials())
      if (t.status == protocol::TrialStatus::Done && std::count(t.tags.begin(), t.tags.end(), tag)) found = t.id;
    if (found > 0) {
      std::cerr << "baseline: trial " << found << ", the same script and settings run before\n";
      return found;
    }
  }
  if (o.plan_only)
    throw std::runtime_error("no stored baseline of this script and these settings: run the command once without "
                             "--plan-only, which runs it first");
  const auto* stop = install_stop_signals();
  const auto exec = cli_executor(o.session, o.worker, "investigate baseline", o.timeout_s, stop);
  investigate::TrialRequest request;
  request.config = c;
  request.name = std::filesystem::path(c.script).filename().string();
  request.tags = {tag};
  const investigate::TrialOutcome out = exec(request);
  if (out.status != protocol::TrialStatus::Done)
    throw std::runtime_error("the baseline run of " + c.script + " did not finish (" +
                             std::string(protocol::to_string(out.status)) +
                             (out.message.empty() ? "" : ": " + out.message) + "); nothing to investigate");
  return out.trial_id;
}

void run(InvestigateOptions o) {
  if (o.script.script.empty() && !trailing_arguments().empty())
    throw std::runtime_error("arguments after -- are a script's: give --script FILE");
  if (!o.script.script.empty()) {
    if (o.trial > 0) throw std::runtime_error("give a stored TRIAL or --script, not both");
    o.trial = script_baseline(o);
  } else if (o.trial <= 0) {
    throw std::runtime_error("which baseline? give a stored TRIAL id, or --script FILE -- ARGS");
  }
  require_files({o.session});
  investigate::PlanOptions po;
  po.steps = o.steps;
  po.warmup = o.warmup;
  po.device_memory_bytes = static_cast<int64_t>(o.device_memory_gib * 1024.0 * 1024.0 * 1024.0);
  int64_t plan_id = 0;
  {
    auto s = store::SessionStore::open(o.session);
    plan_id = investigate::open_investigation(s, o.trial, po, !o.fresh);
    const auto plan = investigate::load_investigation(s, plan_id);
    std::cerr << "plan " << plan_id << " for trial " << o.trial << " (" << plan.baseline.name << "): "
              << plan.variants.size() << " variants, " << plan.skipped.size() << " skipped\n";
    std::cerr << "  diagnosis: " << plan.diagnosis << "\n";
    for (const auto& v : plan.variants)
      std::cerr << "  " << v.arm << "  " << v.title << "  [" << to_string(v.category) << "; " << v.source << "]\n";
    for (const auto& sk : plan.skipped) std::cerr << "  skipped  " << sk.title << ": " << sk.reason << "\n";
    if (o.plan_only) {
      if (o.json) std::cout << investigate::to_json(plan).dump(2) << "\n";
      return;
    }
  }
  investigate::Budget b;
  b.max_trials = o.budget;
  b.max_minutes = o.budget_minutes;
  b.baseline_repeats = o.baseline_repeats;
  b.max_repeats = o.max_repeats;
  const auto* stop = install_stop_signals();
  const auto exec = cli_executor(o.session, o.worker, "investigate plan " + std::to_string(plan_id), o.timeout_s, stop);
  const investigate::PlanRef plan{plan_id, investigate::PlanKind::Investigate, b};
  const store::PlanState end =
      investigate::run_plan(o.session, plan, exec, [](const std::string& line) { std::cerr << line << "\n"; }, stop);
  auto s = store::SessionStore::open(o.session, {store::SessionStore::Mode::ReadOnly});
  const auto a = investigate::current_attribution(s, plan_id);
  if (o.json) {
    auto j = investigate::to_json(a);
    j["plan"] = plan_id;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << investigate::render(a);
  }
  if (end == store::PlanState::Paused)
    throw std::runtime_error("plan " + std::to_string(plan_id) + " paused; run the same command again to resume it");
}

}  // namespace

void add_investigate_command(CLI::App& app) {
  auto o = std::make_shared<InvestigateOptions>();
  auto* cmd = app.add_subcommand("investigate",
                                 "Run the forum's hypotheses around a stored trial as one experiment and rank them by "
                                 "measured effect (resumes a stored plan)");
  cmd->add_option("session", o->session, "Session file")->required();
  cmd->add_option("trial", o->trial, "Trial id of the baseline (or --script: your own script, run first)");
  add_script_options(cmd, &o->script);
  cmd->add_option("--set", o->sets, "With --script: a knob of its baseline, KEY=VALUE (repeatable)")
      ->needs(cmd->get_option("--script"));
  auto* budget = cmd->add_option("--budget", o->budget, "At most this many trials (the plan's, resumed ones included)");
  cmd->add_option("--budget-minutes", o->budget_minutes, "At most this many minutes of trial time")->excludes(budget);
  cmd->add_option("--worker", o->worker, "tunebench-worker to run (default: beside this program, or TUNEBENCH_WORKER)");
  cmd->add_option("--steps", o->steps, "Steps of every trial (default: the baseline's)");
  cmd->add_option("--warmup", o->warmup, "Warm-up steps of every trial (default: the baseline's)");
  cmd->add_option("--baseline-repeats", o->baseline_repeats, "Runs of the baseline (noise floor)")->check(CLI::Range(1, 10));
  cmd->add_option("--max-repeats", o->max_repeats, "Runs of a variant whose effect is within the noise")
      ->check(CLI::Range(1, 10));
  cmd->add_option("--timeout", o->timeout_s, "Seconds before one trial is stopped (0: none)");
  cmd->add_option("--device-memory-gib", o->device_memory_gib,
                  "Memory per device for pruning variants (default: the baseline's device)");
  cmd->add_flag("--new", o->fresh, "Plan anew instead of resuming the newest plan of this trial");
  cmd->add_flag("--plan-only", o->plan_only, "Store and print the plan, run nothing");
  cmd->add_flag("--json", o->json, "Print the attribution as JSON");
  cmd->callback([o] { run(*o); });
}

}  // namespace tunebench::cli
