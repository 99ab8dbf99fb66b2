// Predicted against measured, for every recorded trial: the table behind docs/BENCHMARKS.md's
// prediction section and the accuracy tests (tests/core/predict).
//
// A step time is never predicted from its own trial. Each case names the trials its calibration
// may use:
//   memory        every trial (memory is not calibrated at all); an out-of-memory trial passes
//                 when the prediction says it does not fit;
//   from single   multi-GPU trials, calibrated on the single-GPU trials of the same model and GPU;
//   other link    multi-GPU trials over a transport a link probe measured, calibrated on trials of
//                 the same model and GPU over other transports, plus that probe (the target applies
//                 when those ran on a faster link: NVLink -> NCCL_P2P_DISABLE=1);
//   larger size   every trial, calibrated on trials of larger models on the same GPU (1B from 7B);
//   smaller size  every trial, calibrated on trials of smaller models; informational;
//   others        every trial, calibrated on all other trials on its GPU (repeats of its own
//                 configuration excluded); informational.
// Step-time targets apply to models of 1B parameters and more (targeted_size in accuracy.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/predict/evidence.h"

namespace tunebench::predict {

struct AccuracyRow {
  std::string case_name;  // "memory", "from single", "other link", "larger size", "smaller size", "others"
  std::string trial;
  std::string basis;                      // what calibrated it, for people
  std::vector<std::string> basis_trials;  // the labels of the trials (and probes) it was predicted from
  std::string unit;                       // "GiB" or "ms"
  double predicted = 0;
  double measured = 0;                        // 0 with `measured_text` for an out-of-memory trial
  std::string predicted_text, measured_text;  // set when the figures are words ("does not fit", "OOM")
  double tolerance = 0;                       // relative; 0 = informational
  bool within = false;
  double error() const { return measured != 0 ? predicted / measured - 1.0 : 0.0; }
};

// Every case for every trial of `evidence` that has what the case needs.
std::vector<AccuracyRow> accuracy_table(const Evidence& evidence);
// A markdown table (docs/BENCHMARKS.md), misses marked.
std::string render_accuracy_markdown(const std::vector<AccuracyRow>& rows);

}  // namespace tunebench::predict
