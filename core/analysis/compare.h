// Trials side by side: the configuration diff, the key metrics with deltas and ratios against a
// baseline (with their spread), scaling efficiency, and throughput said in words.
//
// A comparison is plain data a Qt table model can show directly: one column per trial, one row
// per differing knob or metric. Repeated trials of one configuration are pooled first
// (analyze_grouped). Formatting for humans lives in report_text.cpp, not here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/trial_metrics.h"
#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

// A knob, or an environment switch (TUNEBENCH_*, TrialMetrics::switches; "unset" where a trial
// ran without it), whose value differs between the trials.
struct KnobDiff {
  std::string key;                  // config JSON key, or the switch's variable name
  std::string label;                // form label from config::knobs(); "switch TUNEBENCH_..."
  std::vector<std::string> values;  // per trial, as knob_text ("" when a trial has no config)
};

enum class Better { Lower, Higher, Neither };

struct MetricRow {
  std::string key;    // "step_ms", "tokens_per_s_per_gpu", ...
  std::string label;  // "Step time"; "Throughput per GPU" ("per CPU rank" when the trials ran on CPUs)
  std::string unit;   // "ms", "tokens/s", "%", "GB/s", "GiB", ""
  Better better = Better::Neither;
  std::vector<std::optional<Spread>> values;  // per trial; nullopt = not measured / not defined
  // Against the baseline trial (nullopt for the baseline itself and where either side is missing):
  std::vector<std::optional<double>> delta;       // median - baseline median
  std::vector<std::optional<double>> ratio;       // median / baseline median
  std::vector<std::optional<double>> ratio_low;   // p25 / baseline p75 (pessimistic end)
  std::vector<std::optional<double>> ratio_high;  // p75 / baseline p25 (optimistic end)
  // Whether the difference to the baseline is beyond the noise (beyond_noise): only such ratios
  // are called better or worse (coloured). False for the baseline and missing values.
  std::vector<bool> beyond_noise;
};

// How trial i's value reads against the baseline: better, worse, or neither (no direction for this
// metric, no ratio, or within the noise). The window and the report colour by this alone.
enum class Standing { Neither, Better, Worse };
Standing standing(const MetricRow& row, size_t trial);

// A difference smaller than this share of the larger median is noise.
inline constexpr double kNoiseRatio = 0.02;
// A time metric (ms) whose medians both stay below this share of the step is noise.
inline constexpr double kNoiseStepShare = 0.01;

// Whether `other` differs from `base` beyond the run-to-run noise: the medians differ by more than
// kNoiseRatio, by more than either side's interquartile range, and the quartile ranges do not
// overlap; for times (unit "ms"), at least one of them is kNoiseStepShare of the step or more.
bool beyond_noise(const Spread& base, const Spread& other, std::string_view unit, const TrialMetrics& base_trial,
                  const TrialMetrics& other_trial);

struct Comparison {
  std::vector<TrialMetrics> trials;
  size_t baseline = 0;                // index into trials
  std::vector<KnobDiff> config_diff;  // knobs, then environment switches, that differ between any two trials
  std::vector<MetricRow> metrics;
  std::optional<size_t> single_reference;                 // the single-GPU trial scaling efficiency refers to
  // Per trial, vs single_reference; nullopt for trials of the reference's own world size (two
  // single-GPU trials have no scaling between them).
  std::vector<std::optional<double>> scaling_efficiency;
  std::vector<std::string> throughput_statements;         // baseline vs each other trial
};

// Groups logs whose configurations are equal (differing_knobs empty, and the same environment
// switches; logs without a config stand alone) and pools each group, in order of first appearance. `names` (parallel to logs, may be
// empty) are the display names users know the trials by (a session's trial names): a group's label
// is its first log's name, so every sentence and table says "7B DDP", not a run id.
std::vector<TrialMetrics> analyze_grouped(const std::vector<protocol::TrialLog>& logs,
                                          const std::vector<std::string>& names = {});

// The baseline a report uses when none is named: the single-GPU trial with the most measured
// steps, else the first.
size_t default_baseline(const std::vector<TrialMetrics>& trials);

Comparison compare(std::vector<TrialMetrics> trials, size_t baseline = 0);

// Step time versus throughput in words, e.g. "ddp: the step is slower (1.50 s vs 1.20 s, +25 %)
// but carries 2.00x the tokens (8,192 vs 4,096), so total throughput is 1.60x ...".
std::string throughput_statement(const TrialMetrics& base, const TrialMetrics& other);

}  // namespace tunebench::analysis
