// `tunebench-cli tune SESSION --preset P`: find the fastest configuration around a preset within a
// budget (core/investigate/autotune.h), running short trials first and long ones for the
// finalists; prints the ranked trials, the best configuration, its worker command line and what
// limited it; --out writes the best config as JSON (`tunebench-worker --config FILE`).
// `--exhaustive` measures every feasible point of the same space (the reference for the search).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/config_inputs.h"
#include "app/cli/plan_executor.h"
#include "core/investigate/planner.h"
#include "core/investigate/plan_run.h"
#include "core/investigate/tune_session.h"
#include "core/store/plans.h"
#include "core/hardware/hardware.h"
#include "core/store/session_store.h"

namespace tunebench::cli {
namespace {

struct TuneOptionsCli {
  std::string session, preset, config_file, hf_config, objective = "tokens_per_s", out, worker, gpu;
  std::vector<std::string> sets, axes;
  ScriptInputs script;
  double cheapest_within_pct = 0;  // --cheapest-within: the second objective (issue 41)
  bool per_gpu = false, json = false, exhaustive = false, fresh = false, dry_run = false;
  double budget_minutes = 0, timeout_s = 0, device_memory_gib = 0;
  int64_t short_steps = 8, long_steps = 20, warmup = 3;
  int finalists = 3, rounds = 3, seeds = 0;
  double eta = 3;
};

void run(const TuneOptionsCli& o) {
  investigate::TuneSpec spec;
  spec.base = config_from_inputs(o.preset, o.config_file, o.sets, o.hf_config, o.script);
  spec.cuda = investigate::runs_on_cuda(spec.base, o.gpu.empty() ? "" : o.gpu);
  if (spec.base.device == config::Device::Auto && o.gpu.empty()) spec.cuda = true;
  if (o.device_memory_gib > 0) spec.device_memory_bytes = static_cast<int64_t>(o.device_memory_gib * (1ull << 30));
  else if (!o.gpu.empty()) {
    const auto* g = hardware::find_gpu(o.gpu);
    if (!g) throw std::runtime_error("unknown GPU '" + o.gpu + "' (see tunebench-cli predict --list)");
    spec.device_memory_bytes = g->memory_bytes;
  }
  if (o.axes.empty()) spec.space = investigate::default_space(spec.base, spec.cuda);
  else
    for (const auto& a : o.axes) spec.space.axes.push_back(investigate::parse_axis(a));
  spec.per_gpu = o.per_gpu;
  spec.options.short_steps = o.short_steps;
  spec.options.long_steps = o.long_steps;
  spec.options.warmup = o.warmup;
  spec.options.finalists = o.finalists;
  spec.options.max_rounds = o.rounds;
  spec.options.seeds = o.seeds;
  spec.options.eta = o.eta;
  spec.gpu = o.gpu;
  spec.options.budget_cost = o.budget_minutes * 60.0;
  spec.options.exhaustive = o.exhaustive;
  spec.options.cheapest_within = o.cheapest_within_pct / 100.0;
  if (o.dry_run) {
    // What the search would measure first, without storing a plan or running anything.
    if (std::filesystem::exists(o.session)) {
      auto s = store::SessionStore::open(o.session, {store::SessionStore::Mode::ReadOnly});
      investigate::predict_space(spec, investigate::session_evidence(s));
    } else {
      investigate::predict_space(spec, {});
    }
    std::cout << spec.prediction_note << "\n";
    std::cout << "rank  predicted tokens/s" << (spec.per_gpu ? " per " + config::device_noun(spec.cuda) : std::string()) << "  step ms  point\n";
    int i = 0;
    for (const auto& p : spec.predicted) {
      char line[80];
      std::snprintf(line, sizeof(line), "%4d  %18.0f  %7.1f  ", ++i, p.objective, p.step_ms);
      std::cout << line << investigate::point_label(spec.space, p.point) << "\n";
    }
    return;
  }
  if (!std::filesystem::exists(o.session)) store::SessionStore::create(o.session, "Autotune");
  int64_t plan_id = 0;
  {
    auto s = store::SessionStore::open(o.session);
    plan_id = investigate::open_tune(s, spec, !o.fresh);
  }
  {
    auto s = store::SessionStore::open(o.session);
    const auto stored = investigate::load_tune(s, plan_id);
    if (!stored.prediction_note.empty()) std::cerr << stored.prediction_note << "\n";
  }
  std::cerr << "tune plan " << plan_id << ": " << spec.space.axes.size() << " axes, grid of " << spec.space.grid_size()
            << " points" << (o.exhaustive ? " (exhaustive)" : "") << "\n";
  const auto* stop = install_stop_signals();
  const auto exec = cli_executor(o.session, o.worker, "tune plan " + std::to_string(plan_id), o.timeout_s, stop);
  const investigate::PlanRef plan{plan_id, investigate::PlanKind::Tune, {}};
  const store::PlanState end =
      investigate::run_plan(o.session, plan, exec, [](const std::string& line) { std::cerr << line << "\n"; }, stop);
  auto s = store::SessionStore::open(o.session, {store::SessionStore::Mode::ReadOnly});
  const auto report = investigate::tune_report(s, plan_id);
  if (o.json) {
    auto j = investigate::to_json(report);
    j["plan"] = plan_id;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << investigate::render(report);
  }
  if (!o.out.empty() && report.result.best) {
    auto best = investigate::config_at(spec.base, spec.space, report.result.best->point, spec.options.long_steps,
                                       spec.options.warmup);
    best.name = "autotuned: " + investigate::point_label(spec.space, report.result.best->point);
    std::ofstream(o.out) << config::to_json(best).dump(2) << "\n";
    std::cerr << (report.result.pending ? "the best so far written to " : "best config written to ") << o.out << "\n";
  }
  if (end == store::PlanState::Paused)
    throw std::runtime_error("tune plan " + std::to_string(plan_id) + " paused; run the same command again to resume it");
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptionsCli>();
  auto* cmd = app.add_subcommand("tune", "Find the fastest configuration around a preset (predicted "
                                         "seeds, successive halving, memory-pruned, resumable)");
  cmd->add_option("session", o->session, "Session file (created when missing)")->required();
  cmd->add_option("--preset", o->preset, "Start from a trial preset");
  cmd->add_option("--config", o->config_file, "Start from a config JSON (over the preset)");
  cmd->add_option("--hf-config", o->hf_config, kHfConfigHelp);
  cmd->add_option("--set", o->sets, "Change a knob of the start: KEY=VALUE (repeatable)");
  add_script_options(cmd, &o->script);
  cmd->add_option("--objective", o->objective, "What to maximise")->check(CLI::IsMember({"tokens_per_s"}));
  cmd->add_flag("--per-gpu", o->per_gpu, "Maximise tokens/s per GPU (per CPU rank on the CPU) instead of in total");
  cmd->add_option("--cheapest-within", o->cheapest_within_pct,
                  "Of the finalists within this many percent of the fastest, pick the one with the most tokens per "
                  "joule (NVML's energy counter; 0: the fastest)")
      ->check(CLI::Range(0.0, 99.0));
  cmd->add_option("--budget-minutes", o->budget_minutes, "Minutes of trial time (0: until the search ends)");
  cmd->add_option("--axis", o->axes,
                  "Search axis KEY=V1,V2,... instead of the default space (repeatable; zero=ddp,zero2,zero3)");
  cmd->add_option("--short-steps", o->short_steps, "Steps of the first-rung trials");
  cmd->add_option("--long-steps", o->long_steps, "Steps of the finalists' trials");
  cmd->add_option("--warmup", o->warmup, "Warm-up steps of every trial");
  cmd->add_option("--finalists", o->finalists, "Points measured again with long trials");
  cmd->add_option("--rounds", o->rounds, "Rounds of the coordinate search");
  cmd->add_option("--seeds", o->seeds,
                  "Points the prediction ranks fastest, measured first (0: about the square root of the feasible points)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--eta", o->eta, "Successive halving: steps grow and survivors shrink by this factor per rung")
      ->check(CLI::Range(1.5, 100.0));
  cmd->add_option("--gpu", o->gpu, "GPU (catalogue id or name) whose memory prunes the space and whose speed ranks it");
  cmd->add_option("--device-memory-gib", o->device_memory_gib, "Memory per device for pruning");
  cmd->add_option("--worker", o->worker, "tunebench-worker to run");
  cmd->add_option("--timeout", o->timeout_s, "Seconds before one trial is stopped (0: none)");
  cmd->add_option("--out", o->out, "Write the best config here (JSON for tunebench-worker --config)");
  cmd->add_flag("--exhaustive", o->exhaustive, "Measure every feasible point with long trials (the reference)");
  cmd->add_flag("--dry-run", o->dry_run,
                "Print the predicted order of the space (what the search measures first) and run nothing");
  cmd->add_flag("--new", o->fresh, "Start a new search instead of resuming the same one");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->callback([o] { run(*o); });
}

}  // namespace tunebench::cli
