// The work of one training step as lists of kernels with their FLOPs and HBM bytes, per phase,
// following the engine op by op (the same ops whose saved tensors activations.h lists). The time
// model (step_model.h) turns work into milliseconds on a device; this file knows no device.
//
// Grouped-query attention shows as narrower k/v projections, rotary writes and attention reads;
// the attention's FLOPs follow the query heads.
//
// Conventions: FLOPs are executed FLOPs (causal attention does half of the PaLM count); bytes are
// DRAM reads + writes of the kernel's operands; a backward elementwise kernel moves twice the bytes
// of its forward (it reads the incoming gradient and the saved input, writes the input gradient).
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/predict/activations.h"
#include "core/predict/attention.h"
#include "core/predict/gemm_shape.h"
#include "core/predict/precision.h"

namespace tunebench::predict {

enum class OpKind { Matmul, Attention, Memory };

struct OpCost {
  std::string name;  // "block wqkv", "block norms", "AdamW (fused)"
  OpKind kind = OpKind::Memory;
  bool fp8 = false;  // a matmul through float8 (amp fp8): the device's fp8 peak applies
  double flops = 0;
  double bytes = 0;
  double kernels = 0;  // launches
  GemmShape gemm;      // Matmul: the shape of one of its GEMMs (its efficiency; gemm_shape.h)
  AttentionKernel attention = AttentionKernel::Cudnn;  // Attention: the kernel that runs
  int64_t head_dim = 0;                                // Attention: the head size
  bool grouped = false;  // attention: fewer key/value heads than query heads
  double backward_bytes = -1;  // Memory: its backward's bytes (< 0: twice the forward's)
  double gradient_cast = 0;    // fp8 Matmul: bytes per element its own output-gradient cast reads (0: none)
};

struct PhaseWork {
  std::vector<OpCost> ops;
  double flops(OpKind kind) const;
  double bytes() const;
  double kernels() const;
};

struct StepWork {
  PhaseWork forward;    // one micro-step
  PhaseWork backward;   // one micro-step, without recompute
  PhaseWork recompute;  // one micro-step's checkpointed block forwards (empty without checkpointing)
  PhaseWork optimizer;  // once per step: clipping, unscaling, the update, gradient zeroing
};

StepWork step_work(const config::TrialConfig& config, const Precision& p, const ExecutionMode& mode);

}  // namespace tunebench::predict
