// A report: the comparison of some trials, the diagnosis of each and of baseline-vs-each pair,
// rendered as text (for the CLI and a forum post) or JSON (for scripts).
//
// make_report is what `tunebench-cli report` and the GUI's "copy as text" share, so the two never
// disagree. The renderers only format; every number comes from compare/diagnosis.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"
#include "core/analysis/diagnosis.h"
#include "core/analysis/pair_diagnosis.h"
#include "core/analysis/sweep.h"
#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

struct Report {
  Comparison comparison;
  std::vector<Diagnosis> diagnoses;  // one per compared trial, same order
  std::vector<PairDiagnosis> pairs;  // baseline vs each other trial
};

Report make_report(std::vector<TrialMetrics> trials, std::optional<size_t> baseline = std::nullopt);
// Groups repeats (analyze_grouped, labelled with the display `names` when given) and picks the
// default baseline unless one is given.
Report make_report(const std::vector<protocol::TrialLog>& logs, std::optional<size_t> baseline = std::nullopt,
                   const std::vector<std::string>& names = {});

std::string render_text(const Report& report);
nlohmann::json render_json(const Report& report);

// A sweep as a table of metrics against the swept knobs (for `tunebench-cli sweep` and pasting).
std::string render_text(const SweepTable& table);
nlohmann::json render_json(const SweepTable& table);

}  // namespace tunebench::analysis
