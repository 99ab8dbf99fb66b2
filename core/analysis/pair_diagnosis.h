// Diagnosis of a pair: why `other` differs from `base` (typically DDP vs single GPU), in ms per
// breakdown part, plus the communication floor and whether data parallelism can beat one GPU
// on this interconnect at all.
//
// The step delta is the difference of the mean breakdowns, so its parts add up exactly to it.
// The feasibility model (docs/ANALYSIS.md, "Pair diagnosis", whether DDP can beat one GPU): a
// rank of the multi-GPU trial computes its share of tokens as fast as the single GPU did (C ms)
// and then pays at most the communication floor F on top (nothing overlapped) and at least
// max(0, F - backward) (everything overlappable hidden). Total throughput over the single GPU's
// is n*C/(C + exposed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/diagnosis.h"
#include "core/analysis/phase_breakdown.h"
#include "core/analysis/trial_metrics.h"

namespace tunebench::analysis {

struct PartDelta {
  Part part = Part::Idle;
  double delta_ms = 0.0;  // other - base, mean over measured steps
};

struct FeasibilityModel {
  int world_size = 2;
  double compute_ms = 0.0;            // C: the single GPU's time for one rank's tokens of `other`
  double floor_ms = 0.0;              // F: the multi-GPU trial's communication floor per step
  double busbw_gbps = 0.0;            // measured in `other`
  double backward_ms = 0.0;           // what all-reduce can hide behind (other's backward part)
  double exposed_min_ms = 0.0;        // max(0, F - backward)
  double speedup_no_overlap = 0.0;    // n*C/(C + F): total throughput vs the single GPU
  double speedup_full_overlap = 0.0;  // n*C/(C + exposed_min)
  double speedup_measured = 0.0;      // other's total throughput / base's
  bool can_beat_single = false;       // speedup_full_overlap > 1
  int64_t accum_for_90pct = 1;        // grad_accum factor keeping >= 90 % per GPU with nothing overlapped
  std::string statement;              // the model in words with its numbers
};

struct PairDiagnosis {
  std::string base_label;
  std::string other_label;
  double step_delta_ms = 0.0;     // mean step of other - mean step of base
  std::vector<PartDelta> deltas;  // every part, largest |delta| first; sums to step_delta_ms
  std::string headline;           // "ddp step +45 ms over single: exposed all-reduce 38 ms (...), data wait 5 ms"
  std::string throughput;         // throughput_statement(base, other)
  std::optional<double> scaling_efficiency;     // other per GPU / base per GPU when base is single-GPU
  std::optional<FeasibilityModel> feasibility;  // when base is single-GPU and other has collectives
  std::vector<Finding> findings;                // ranked: other's own findings, then pair-level ones
};

PairDiagnosis diagnose_pair(const TrialMetrics& base, const TrialMetrics& other);

}  // namespace tunebench::analysis
