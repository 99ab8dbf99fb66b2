// Which dtype each kind of tensor has under a trial's precision knobs, as the engine does it
// (engine/trainer.cpp: uses_autocast, param_dtype; strategy/fsdp.cpp: compute and reduce dtypes).
// Sizes are bytes per element.
#pragma once

#include <string>

#include "core/config/trial_config.h"

namespace tunebench::predict {

struct Precision {
  int param_bytes = 4;             // master parameters, optimizer state, single/DDP gradients
  int residual_bytes = 4;          // the activations flowing between blocks
  int compute_bytes = 4;           // matmul operands and outputs
  bool autocast = false;           // autocast: weights cast on every forward, cached until the forward ends
  bool fused = false;              // compile fused: the fused ops cast weights themselves (kept only for backward)
  bool fp8 = false;                // amp fp8: the blocks' matmuls in float8 (e4m3/e5m2), the rest as bf16
  int weight_copy_bytes = 0;       // per matmul weight and forward: its compute-dtype copy (0: none)
  std::string matmul_dtype;        // "bf16", "fp16", "tf32", "fp32": which device peak applies
  std::string block_matmul_dtype;  // the blocks' matmuls ("fp8" under amp fp8, else matmul_dtype)
  int gathered_bytes = 4;          // FSDP: gathered units (the compute dtype)
  int reduce_bytes = 4;            // FSDP: gradients are reduce-scattered in this dtype
  int wire_bytes = 4;              // DDP: all-reduced bytes per gradient element (compression)
};

Precision precision_of(const config::TrialConfig& config);

// Bytes per element of an FSDP/DDP dtype knob.
int dtype_bytes(config::DType dtype);

}  // namespace tunebench::predict
