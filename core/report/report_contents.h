// What the HTML and Markdown reports say, gathered once from the stored trials: the comparison
// and diagnoses (analysis::make_report, as the comparison window and `tunebench-cli report`), the
// headline verdict, the setup rows of the config table, and per stored trial what its own panels
// need (its metrics for the representative step and utilisation, its environment, its command
// line). Internal to core/report; the renderers only format this.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/analysis/report.h"
#include "core/report/report.h"
#include "core/store/records.h"

namespace tunebench::report {

// One stored trial as the report shows it on its own (timeline, telemetry, environment, command).
struct TrialPanel {
  const store::LoadedTrial* stored = nullptr;
  std::string name;                 // display name, never empty
  analysis::TrialMetrics metrics;   // analysis::analyze of its log
  uint32_t rgb = 0;                 // its series colour (analysis::series_rgb)
  std::string command_line;         // launch::worker_command_line of its config; "" without one
  std::vector<std::string> unknown_knobs;  // settings an imported trace could not show
};

// A row of the config table: a label and one value per compared trial.
struct TableRow {
  std::string label;
  std::vector<std::string> values;
};

struct ReportContents {
  std::string title;
  analysis::Report report;
  std::vector<TrialPanel> panels;        // one per stored trial, in the order given
  std::vector<size_t> first_panel;       // per compared (pooled) trial: its first stored trial
  std::string verdict;                   // one sentence with its numbers
  std::vector<TableRow> setup;           // model, world size, GPUs, link
  std::vector<TableRow> config_diff;     // the knobs that differ (model and world size are in setup)
};

ReportContents make_contents(const std::vector<store::LoadedTrial>& trials, const ReportOptions& options);

// The headline: the trial with the most throughput and its ratio to the baseline, and the one
// with the least with the part of the step that grew most. Sentences from the report's numbers.
std::string headline_verdict(const analysis::Report& report);

// A metric row of the comparison by key ("tokens_per_s_total"), or nullptr.
const analysis::MetricRow* metric_row(const analysis::Comparison& comparison, const std::string& key);

// "6.74 B parameters", "125 M parameters"; "" for 0.
std::string parameter_text(int64_t parameters);

}  // namespace tunebench::report
