// What the forward pass keeps for backward, as a list of saved tensors per operation, so that a
// kernel mode changes a list instead of a formula.
//
// Sizes are bytes per token (multiply by micro_batch x seq_len); k and v are kv_dim wide
// (grouped-query attention), q and the attention output dim wide. Eager mode follows
// engine/model/llama.cpp op by op (RMSNorm computes in fp32 inside; rotary embeddings return the
// compute dtype; SDPA keeps q, k, v, its output and the log-sum-exp; SwiGLU keeps the silu output
// and the product; the loss keeps fp32 log-probabilities). Fused mode (`compile fused`,
// engine/kernels/fused_ops.h) keeps: each norm's input and its 16-bit output (the next linear's
// input), q, k, v as the rotary kernel's copies (not the qkv projection), the attention output,
// SwiGLU's input and its product (w2's input), and of the loss only the input gradient, computed in
// forward (fused linear cross-entropy: fp32 logits never exist). Under amp fp8 the blocks' linears
// keep their inputs as float8 transposes (1 byte) instead.
// Weight copies are not listed here: memory_model.cpp holds them per unit (Precision::weight_copy_bytes).
// Deliberately approximate: transients (tensors alive only inside one op) are summarised by one
// figure per block and per head, documented in docs/PREDICT.md.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/predict/precision.h"

namespace tunebench::predict {

enum class KernelMode { Eager, Fused };

struct ExecutionMode {
  KernelMode kernels = KernelMode::Eager;
  bool cuda_graph = false;      // the step is captured and replayed (gradients kept at fixed addresses)
  bool math_attention = false;  // SDPA's math fallback (the CPU): keeps the attention probabilities
  bool cuda = true;             // a GPU (fused AdamW, flash attention); false: the CPU
  double head_pad = 1.0;        // padded / real head size the attention kernel gets (flash: multiple of 8)
  bool weight_copies = false;   // AdamW writes the 16-bit weights the forward reads (memory_model.h)
  bool half_weight_grads = false;  // the blocks' matmul weights' gradients in bf16 (memory_model.h)
};

// The mode a config runs in on `cuda` (false: the CPU): `compile` fused / graph / fused+graph.
ExecutionMode execution_mode(const config::TrialConfig& config, bool cuda);

struct SavedTensor {
  std::string op;          // "attn_norm", "wqkv", "sdpa", ...
  std::string what;        // "input (fp32 residual)"
  double bytes_per_token;  // for one sequence position
};

struct BlockActivations {
  std::vector<SavedTensor> saved;            // kept from the block's forward to its backward
  double checkpoint_bytes_per_token = 0;     // what a checkpointed block keeps: its input
  double forward_transient_per_token = 0;    // alive only inside the block's forward
  double nograd_forward_peak_per_token = 0;  // live set of a checkpointed (no_grad) block forward
  double backward_transient_per_token = 0;   // activation gradients alive during the block's backward
  double saved_bytes_per_token() const;
};

struct HeadActivations {
  std::vector<SavedTensor> saved;            // final norm and loss inputs kept for backward
  double forward_transient_per_token = 0;    // logits copies alive while the loss is computed
  double backward_transient_per_token = 0;   // loss and logits gradients at the start of backward
  double saved_fixed_bytes = 0;              // kept whatever the batch (fused: the output weight's gradient)
  double forward_transient_fixed_bytes = 0;  // fused: one chunk of logits and its weight-gradient part
  double saved_bytes_per_token() const;
};

BlockActivations block_activations(const config::ModelDims& dims, int64_t seq_len, const Precision& p,
                                   const ExecutionMode& mode);
// `tokens`: per micro-step (the fused loss works through the logits in chunks of
// rules::loss_chunk_rows, as the engine's kernel does).
HeadActivations head_activations(const config::ModelDims& dims, const Precision& p, const ExecutionMode& mode,
                                 double tokens);

}  // namespace tunebench::predict
