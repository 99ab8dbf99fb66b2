// `tunebench-cli predict`: memory and step time of a configuration on any GPUs before running it,
// and `--list-hardware`, the catalogue. Argument wiring only: core/predict does the work.
//
//   tunebench-cli predict --preset 7b-ddp --gpu rtx4090 --gpus 2 --link pcie4-nop2p [--json]
//   tunebench-cli predict --config trial.json --evidence sessions/h200-7b.tbsession
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/config_inputs.h"
#include "app/cli/trial_inputs.h"
#include "core/launch/launch_setup.h"
#include "core/predict/predictor.h"
#include "core/predict/render.h"
#include "core/predict/target.h"

namespace tunebench::cli {

namespace {

struct PredictOptions {
  std::string config_file, preset, gpu, link, catalogue_file, hf_config;
  std::vector<std::string> sets, evidence;
  int gpus = 0, hosts = 1;
  double memory_gib = 0;
  bool json = false, list = false;
};

void list_hardware(const hardware::Catalogue& cat) {
  std::cout << "GPUs (" << cat.origin << "): id, name, memory, dense bf16 / fp8 TFLOP/s, HBM GB/s, default link\n";
  for (const auto& g : cat.gpus) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %-13s %-32s %6.1f GiB  %7.1f / %-7s %6.0f  %s\n", g.id.c_str(), g.name.c_str(),
                  static_cast<double>(g.memory_bytes) / (1024.0 * 1024 * 1024), g.bf16_tflops.value_or(0),
                  g.fp8_tflops ? std::to_string(static_cast<int>(*g.fp8_tflops)).c_str() : "-", g.hbm_gbps,
                  g.default_link.c_str());
    std::cout << line;
  }
  std::cout << "Links: id, busbw GB/s (nccl-tests, large messages), latency us, source\n";
  for (const auto& l : cat.links) {
    char line[512];
    std::snprintf(line, sizeof(line), "  %-21s %7.1f %6.0f  %s\n", l.id.c_str(), l.busbw_gbps, l.alpha_us,
                  l.name.c_str());
    std::cout << line << "      " << l.source << "\n";
  }
}

void run_predict(const PredictOptions& o) {
  hardware::Catalogue loaded;
  if (!o.catalogue_file.empty()) loaded = hardware::load_catalogue(o.catalogue_file);
  const hardware::Catalogue& cat = o.catalogue_file.empty() ? hardware::catalogue() : loaded;
  if (o.list) {
    list_hardware(cat);
    return;
  }
  predict::Evidence evidence;
  for (auto& t : read_loaded_trial_inputs(o.evidence)) {
    auto shared = std::make_shared<protocol::TrialLog>(std::move(t.log));
    evidence.add(shared->trial, shared, t.info.tags);
  }
  for (const auto& note : evidence.notes()) std::cerr << "note: " << note << "\n";

  const auto basis = evidence.select([](const predict::MeasuredTrial&) { return true; });
  predict::Target target;
  target.gpu = o.gpu;
  target.gpus = o.gpus;
  target.link = o.link;
  target.hosts = o.hosts;
  target.memory_bytes = static_cast<int64_t>(o.memory_gib * 1024 * 1024 * 1024);
  // The same scenario the GUI's Prediction dock and What-if dialog build from their pickers.
  const predict::TargetedScenario targeted =
      predict::scenario_for(config_from_inputs(o.preset, o.config_file, o.sets, o.hf_config), target, basis, cat);
  for (const auto& note : targeted.notes) std::cerr << "note: " << note << "\n";
  const predict::Scenario& s = targeted.scenario;
  // What `run` refuses is refused here too, in its words and with its exit status (issue 44).
  if (const auto problems = launch::config_problems(s.config)) throw ConfigError(*problems);

  const predict::Prediction p = predict::predict_scenario(s, basis, cat);
  if (o.json)
    std::cout << predict::render_json(p).dump(2) << "\n";
  else
    std::cout << predict::render_text(p);
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand("predict", "Predict peak memory and step time of a configuration on any GPUs");
  cmd->add_option("--config", o->config_file, "Trial configuration JSON");
  cmd->add_option("--preset", o->preset, "Start from a trial preset (7b-single, 7b-ddp, 7b-fsdp, ...)");
  cmd->add_option("--hf-config", o->hf_config, kHfConfigHelp);
  cmd->add_option("--set", o->sets, "Change a knob: KEY=VALUE (repeatable), e.g. --set checkpointing=true");
  cmd->add_option("--gpu", o->gpu, "GPU: catalogue id (h200, rtx4090, ...) or device name");
  cmd->add_option("--gpus", o->gpus, "Number of GPUs (the world size)")->check(CLI::Range(1, 1024));
  cmd->add_option("--link", o->link, "Interconnect: catalogue id (nvlink4, pcie4-nop2p, ib400, ...)");
  cmd->add_option("--hosts", o->hosts, "Hosts the GPUs span")->check(CLI::Range(1, 1024));
  cmd->add_option("--memory-gib", o->memory_gib, "Memory per GPU to check the fit against (default: the catalogue's)");
  cmd->add_option("--evidence", o->evidence,
                  "Measured trials to calibrate from and link probes: sessions (.tbsession) or event logs (.jsonl)");
  cmd->add_option("--catalogue", o->catalogue_file, "Hardware catalogue JSON instead of the built-in one");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->add_flag("--list-hardware", o->list, "List the catalogue's GPUs and links with their sources");
  // Failures reach main(): one prefix ("tunebench-cli: ") and one status per mistake.
  cmd->callback([o] { run_predict(*o); });
}

}  // namespace tunebench::cli
