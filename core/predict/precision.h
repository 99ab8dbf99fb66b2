// Which dtype each kind of tensor has under a trial's precision knobs, as the engine does it
// (engine/trainer.cpp: uses_autocast, param_dtype; strategy/fsdp.cpp: compute and reduce dtypes).
// Sizes are bytes per element.
#pragma once

#include <string>

#include "core/config/trial_config.h"

namespace tunebench::predict {

struct Precision {
  int param_bytes = 4;       // master parameters, optimizer state, single/DDP gradients
  int residual_bytes = 4;    // the activations flowing between blocks
  int compute_bytes = 4;     // matmul operands and outputs
  bool autocast = false;     // fp32 weights are cast to the compute dtype on every forward
  std::string matmul_dtype;  // "bf16", "fp16", "tf32", "fp32": which device peak applies
  int gathered_bytes = 4;    // FSDP: gathered units (the compute dtype)
  int reduce_bytes = 4;      // FSDP: gradients are reduce-scattered in this dtype
  int wire_bytes = 4;        // DDP: all-reduced bytes per gradient element (compression)
};

Precision precision_of(const config::TrialConfig& config);

// Bytes per element of an FSDP/DDP dtype knob.
int dtype_bytes(config::DType dtype);

}  // namespace tunebench::predict
