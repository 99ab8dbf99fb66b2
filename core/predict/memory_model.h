// Peak device memory of one rank, predicted before launch for any strategy and knob.
//
// The step is simulated unit by unit (embedding, blocks, head) in the order the engine runs it:
// the forward of every micro-step, the backward in reverse, then the optimizer, with each
// allocation and release of the engine's strategies (strategy/single, ddp, fsdp), of autograd
// (saved tensors, gradients) and of autocast (weight copies, cached until the forward ends).
// The peak is the largest live total at any point; `at_peak` lists what makes it up. It is the
// figure the worker measures as memory.peak_bytes (the caching allocator's peak allocation).
// device_needed_bytes adds what the allocator does not count: CUDA context, NCCL buffers and
// allocator slack: catalogue constants, each with its source. docs/PREDICT.md has every term.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/predict/activations.h"
#include "core/hardware/hardware.h"

namespace tunebench::predict {

struct MemoryTerm {
  std::string name;  // "parameters", "optimizer state", "activations (saved)", ...
  double bytes = 0;
  std::string note;  // what it is, or the source of a constant
};

struct MemoryPrediction {
  int64_t peak_bytes = 0;             // compare with the measured memory.peak_bytes
  std::string peak_at;                // "end of forward", "backward of block 31", "optimizer step"
  std::vector<MemoryTerm> at_peak;    // sums to peak_bytes
  int64_t resident_bytes = 0;         // held all step: parameters, optimizer state, persistent buffers
  int64_t construction_bytes = 0;     // building the model: every rank creates it whole before any sharding
  std::vector<MemoryTerm> overheads;  // not in the allocator's peak: context, NCCL, slack
  int64_t device_needed_bytes = 0;    // max(peak, construction) + overheads: what must fit in the device
  BlockActivations block;             // the saved-tensor list per block that was used
  HeadActivations head;
  bool weight_copies = false;  // AdamW writes the next forward's weights (below)
  // What is held at the end of the last micro-step's forward (its loss done) and backward of a step
  // after the first, the moments the worker reads its memory categories at: under weight_copies the
  // forward reads AdamW's copies, alive from the step before, instead of casting its weights.
  std::vector<MemoryTerm> at_forward_end;
  std::vector<MemoryTerm> at_backward_end;
};

struct MemoryOptions {
  bool cuda = true;                                // false: the CPU (math attention, no CUDA context, no fused AdamW)
  bool fused_adamw = true;                         // the worker has the fused AdamW kernel (libtorch 2.x with CUDA)
  const hardware::Catalogue* catalogue = nullptr;  // constants; nullptr = the built-in one
  int64_t device_memory_bytes = 0;                 // what the device holds; 0: unknown (assumed large enough)
};

// Whether the worker's AdamW writes the next forward's weights (core/rules/optimizer_rules.h):
// where rules::optimizer_weight_copies_apply says it may, with fused AdamW, and where the device
// (`device_memory_bytes`; unknown counts as room) holds what they add beside the step without them
// (rules::weight_copies_fit with this model's figures; the worker measures its own after step 0).
// predict_memory applies it. The weight gradients in bf16: rules::half_weight_grads.
bool optimizer_weight_copies(const config::TrialConfig& config, const MemoryOptions& options);

MemoryPrediction predict_memory(const config::TrialConfig& config, const MemoryOptions& options = {});

// "fits" when device_needed_bytes <= memory; "tight" when only the slack does not fit.
enum class Fit { Fits, Tight, DoesNotFit };
Fit fit_of(const MemoryPrediction& prediction, int64_t device_memory_bytes);
const char* to_string(Fit fit);

}  // namespace tunebench::predict
