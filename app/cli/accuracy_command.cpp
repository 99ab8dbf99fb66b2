// `tunebench-cli accuracy INPUTS...`: predicted against measured for every recorded trial, as the
// markdown table of docs/BENCHMARKS.md (or JSON). Argument wiring only: core/predict/accuracy.h.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/trial_inputs.h"
#include "core/predict/accuracy.h"

namespace tunebench::cli {

namespace {

struct AccuracyOptions {
  std::vector<std::string> inputs;
  bool json = false;
};

void run_accuracy(const AccuracyOptions& o) {
  predict::Evidence evidence;
  for (auto& t : read_loaded_trial_inputs(o.inputs)) {
    auto shared = std::make_shared<protocol::TrialLog>(std::move(t.log));
    evidence.add(shared->trial, shared, t.info.tags);
  }
  for (const auto& note : evidence.notes()) std::cerr << "note: " << note << "\n";
  const auto rows = predict::accuracy_table(evidence);
  if (!o.json) {
    std::cout << predict::render_accuracy_markdown(rows);
    return;
  }
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"case", r.case_name}, {"trial", r.trial},         {"basis", r.basis},
                        {"unit", r.unit},      {"tolerance", r.tolerance}, {"within", r.within}};
    j["predicted"] = r.predicted_text.empty() ? nlohmann::json(r.predicted) : nlohmann::json(r.predicted_text);
    j["measured"] = r.measured_text.empty() ? nlohmann::json(r.measured) : nlohmann::json(r.measured_text);
    arr.push_back(j);
  }
  std::cout << arr.dump(2) << "\n";
}

}  // namespace

void add_accuracy_command(CLI::App& app) {
  auto o = std::make_shared<AccuracyOptions>();
  auto* cmd = app.add_subcommand("accuracy", "Predicted vs measured memory and step time for recorded trials");
  cmd->add_option("inputs", o->inputs, "Sessions (.tbsession) and event logs (.jsonl), link probes included")
      ->required();
  cmd->add_flag("--json", o->json, "Print JSON instead of a markdown table");
  // Failures reach main(): one prefix ("tunebench-cli: ") and one status per mistake.
  cmd->callback([o] { run_accuracy(*o); });
}

}  // namespace tunebench::cli
