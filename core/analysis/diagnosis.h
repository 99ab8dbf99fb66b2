// Diagnosis of one trial: ranked, quantified findings, each with follow-up trials to try.
//
// Rules and thresholds (docs/ANALYSIS.md, "Diagnosis rules") are the constants below. A finding's
// impact_ms is the step time it explains (the mean breakdown part it is about); findings are
// ranked blocking first (the trial failed), then by impact_ms. A suggestion is a list of concrete
// knob changes with values computed from this trial (grad_accum 8, not "raise accumulation"), so
// the GUI creates the follow-up trial with apply(). This file does not compare two trials
// (pair_diagnosis.h does) and does not format reports.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/trial_metrics.h"
#include "core/config/trial_config.h"
#include "core/rules/thresholds.h"

namespace tunebench::analysis {

// ---- thresholds ---------------------------------------------------------------------------------
inline constexpr double kDataWaitShare = 0.05;       // data wait >= 5 % of the step: data-bound
inline constexpr double kExposedCommShare = 0.05;    // exposed comm >= 5 % of the step: comm-bound
// A data-bound finding needs a data wait of at least this share of the step itself: host-to-device
// time alone (a copy, or a profiler's start-up landing in it) is said as copies, not as the loader.
inline constexpr double kRealDataWaitShare = 0.01;
inline constexpr double kDependencyWaitShare = 0.05;  // queued work held >= 5 % of the step: dependency-bound
// GPU idle (not data wait) >= rules::kIdleShare (10 %) of the step: host-bound (core/rules/thresholds.h:
// the worker's kernel sampler acts on the same threshold).
inline constexpr double kImbalanceShare = 0.05;      // busiest rank - least busy rank >= 5 % of the step: straggler
inline constexpr double kPeakMemoryShare = 0.90;     // peak >= 90 % of device memory: memory-bound
inline constexpr double kHeadroomShare = 0.60;       // peak < 60 %: room to double the micro-batch
inline constexpr double kTargetExposedShare = 0.10;  // accumulation is sized to bring exposed comm below this
inline constexpr double kOptimizerShare = 0.15;     // the update >= 15 % of the step: worth its bytes

enum class FindingKind {
  Failed,
  MemoryBound,
  DataBound,
  CommBound,
  IdleBound,
  DependencyBound,
  Imbalance,
  ComputeBound,
  Scaling
};
std::string_view to_string(FindingKind kind);  // "failed", "memory-bound", ...

struct KnobChange {
  std::string key;    // config JSON key
  std::string value;  // text as config::set_knob takes it
};

struct Suggestion {
  std::string title;                // "grad_accum 8"
  std::vector<KnobChange> changes;  // applied in order
  std::string why;                  // the expected effect, in numbers where we have them
};

struct Finding {
  FindingKind kind = FindingKind::ComputeBound;
  std::string title;       // one line with the numbers
  std::string detail;      // further sentences
  double impact_ms = 0.0;  // step time this finding explains (ranking key)
  double share = 0.0;      // impact_ms / step time
  bool blocking = false;   // the trial failed: ranked first
  std::vector<Suggestion> suggestions;
};

struct Diagnosis {
  std::string trial;
  std::string label;
  std::string verdict;            // the first finding's title, or a statement that nothing stands out
  std::vector<Finding> findings;  // ranked
};

// Every suggestion it returns passes config::validate when applied to the trial's config.
Diagnosis diagnose(const TrialMetrics& trial);
// Blocking first, then impact_ms descending; stable for ties.
void rank_findings(std::vector<Finding>& findings);
// Drops every suggestion whose follow-up trial apply() finds invalid (a doubled num_workers past
// its cap would start a trial that cannot run).
void keep_valid_suggestions(std::vector<Finding>& findings, const config::TrialConfig& base);

// DDP accumulation: all-reducing once per k micro-steps (no_sync) divides the exposed share.
// The grad_accum that brings the exposed share below kTargetExposedShare, assuming the rest of the
// step scales with k: grad_accum * max(2, ceil(exposed * 0.9 / (0.1 * rest))), at most 64.
int64_t grad_accum_for_exposed(const config::TrialConfig& c, double exposed_ms, double step_ms);
// The suggestion to run with grad_accum `accum`, with its expected exposed share.
Suggestion grad_accum_suggestion(const config::TrialConfig& c, int64_t accum, double exposed_ms, double step_ms);

// The follow-up trial: `base` with every change applied and its name extended by the title.
// Problems (unknown key, bad value, failed validation) go to *problems when given.
config::TrialConfig apply(const Suggestion& suggestion, config::TrialConfig base,
                          std::vector<config::Problem>* problems = nullptr);

}  // namespace tunebench::analysis
