// Measured memory by category against the prediction, and an out-of-memory explained: which
// category grew past what the prediction allowed, by how much, in which phase, and which knob
// fixes it with the predicted memory of that fix (predict_memory of the changed configuration).
//
// The measured categories are metrics/memory_categories.h's (a memory-sampled step's, or the
// allocator's state an out-of-memory error carries in details.memory_categories); the predicted
// terms are predict_memory's at_peak, each mapped onto one of those categories here (the one table
// of that mapping; a term it does not know makes the comparison say so, never a silent guess).
// The worker computes nothing of this: the reading side (report, CLI, GUI) does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "core/predict/memory_model.h"
#include "core/protocol/events.h"

namespace tunebench::predict {

// The measured category (metrics::category_bytes' names) a predicted at_peak term belongs to, by
// the rule the worker measures with: known tensors by what they are; other blocks the forward
// allocated are activations (mid-forward, its temporaries and autocast's weight casts too), those
// allocated later in the step temporaries (a recompute's activations are the backward's), and
// what an earlier step left that is no known tensor unattributed (AdamW's next-forward weights).
// nullopt: a term name this table does not know (a test walks the memory model's terms).
std::optional<std::string> category_of_term(const std::string& term_name);

struct CategoryComparison {
  std::string category;          // "parameters", ..., "unattributed"
  int64_t measured_bytes = 0;
  int64_t predicted_bytes = 0;   // the prediction's at_peak terms of this category
  std::vector<std::string> terms;  // those terms' names
};

// Measured against predicted, category by category (all seven, in category_bytes' order); terms of
// unknown category are listed in `unknown_terms`.
struct MemoryComparison {
  std::vector<CategoryComparison> rows;
  std::vector<std::string> unknown_terms;
  int64_t measured_total_bytes = 0;
  int64_t predicted_peak_bytes = 0;
  std::string predicted_peak_at;
  std::string predicted_at;  // the moment the predicted column is of: "end of forward", ..., or the peak's
};
// A memory-sampled step's categories (phase "forward" or "backward": read at that phase's end) are
// compared with the prediction's terms at the same moment (at_forward_end, at_backward_end); others
// (an out-of-memory's, `at_peak` true) with the terms at the predicted peak, what it allowed.
MemoryComparison compare_memory(const protocol::MemoryCategories& measured, const MemoryPrediction& predicted,
                                bool at_peak = false);

// One line for a view: "memory at the backward of step 13: parameters 12.55 GiB (predicted 12.55 GiB),
// ..., reserved, held by no tensor 1.20 GiB"; categories that are zero on both sides are left out.
std::string memory_line(const MemoryComparison& comparison, const std::string& phase, int64_t step,
                        int64_t reserved_free_bytes);

struct MemoryFix {
  std::string knob;     // "checkpointing", "micro_batch", "strategy", "grad_dtype", "bucket_mb", "optimizer"
  std::string change;   // "checkpointing on", "micro_batch 8 -> 4 with grad_accum 1 -> 2"
  int64_t predicted_peak_bytes = 0;
  int64_t predicted_device_needed_bytes = 0;
  bool fits = false;    // device_needed within the device's memory (unknown device: false)
};

struct OomExplanation {
  std::string category;      // the category that grew most past its predicted bytes; empty: none did
  int64_t measured_bytes = 0;
  int64_t predicted_bytes = 0;
  int64_t excess_bytes = 0;  // measured - predicted of that category
  std::string phase;         // where the allocation failed: "forward", "backward", "optimizer", "setup"
  int64_t step = -1;
  int64_t requested_bytes = 0;
  MemoryComparison comparison;
  std::vector<MemoryFix> fixes;  // the knobs for that category, fitting ones first, then by memory
  std::string text;              // a paragraph for a person
};

// The explanation of an out-of-memory error whose details carry the allocator's state
// (details.memory_categories, oom_phase, oom_step, requested_bytes; app/worker's add_oom_record).
// nullopt when the details have no categories. `device_memory_bytes`: the device's (the hello's);
// 0 when unknown. Throws std::invalid_argument on details whose categories are malformed.
std::optional<OomExplanation> explain_oom(const config::TrialConfig& config, const nlohmann::json& error_details,
                                          int64_t device_memory_bytes, const MemoryOptions& options = {});

}  // namespace tunebench::predict
