// A LLaMA-style decoder (RMSNorm, rotary embeddings, SwiGLU, causal SDPA), written as a list of
// units so that parallelism can be applied from outside (torchtitan's habit): unit 0 is the token
// embedding, units 1..L the transformer blocks, unit L+1 the final norm and output head.
//
// Each unit's parameters are views into one flat buffer of that unit (FSDP shards and gathers
// whole units; DDP and the optimizer iterate parameters). The forward math matches
// scripts/pytorch_reference.py line by line so both run the same network: grouped-query
// attention (fewer key/value heads; SDPA's enable_gqa on 2.5+, the heads repeated before), the
// rotary base rope_theta, and tied embeddings (the head unit then holds only the final norm and
// reads the embedding unit's matrix).
// Deliberately absent: dropout, KV cache, biases, sliding windows.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"
#include "core/engine/optim/weight_copy.h"

namespace tunebench::engine {

// How the model computes; the trainer sets it from the config. The composite path (the default)
// is plain ATen ops meant to run under autocast, line by line the reference script. The fused path
// (`compile` fused) calls kernels/fused_ops.h with explicit dtypes and runs without autocast: the
// residual stream keeps the embedding's dtype, every matmul reads `compute`.
struct ModelKernels {
  bool fused = false;
  at::ScalarType compute = at::kFloat;
  bool fp8 = false;  // the blocks' matmuls in float8 (kernels/fp8_linear.h); needs `fused`
  // Head size the attention kernel is handed on the fused path (0: the model's). Flash needs a
  // multiple of 8; the rotary kernel writes q, k, v padded with zeros, so SDPA copies nothing.
  int64_t attention_head_dim = 0;
  // Tied embeddings: the lookup's gradient as the few rows the batch touched (a sparse gradient,
  // fused::embedding_rows), added to the head's dense gradient where autograd sums the two,
  // instead of a dense vocabulary x dim tensor of zeros and a dense add. Without set_lookup_rows
  // its lookup finds the batch's distinct tokens on the device, which synchronises: not inside a
  // CUDA-graph capture (config::TrialConfig::tied_lookup_rows says where it applies).
  bool sparse_embedding_grad = false;
  // The blocks' matmul weights' gradients in `compute` (rules::half_weight_grads): their fused
  // linears' backward writes dW into the model's store (take_half_weight_grads) instead of handing
  // autograd an fp32 gradient for the weight, whose .grad stays undefined. Fused, not fp8.
  bool half_weight_grads = false;
};

class Fp8Linear;

struct ModelUnit {
  std::string name;                 // "embedding", "block 0", ..., "head"
  at::Tensor flat;                  // all parameters of the unit, contiguous, 1-D
  std::vector<at::Tensor> params;   // leaf views into `flat`, requires_grad
  std::vector<std::string> param_names;
};

class LlamaModel {
 public:
  // Creates every parameter directly on `options.device()` in `options.dtype()`: a 7B model is
  // never materialised on the host. Initialisation follows the reference: N(0, 0.02) for
  // matrices, ones for norm weights, from the global generator (seed it first).
  LlamaModel(const config::ModelDims& dims, at::TensorOptions options);
  ~LlamaModel();

  void set_kernels(ModelKernels kernels);
  const ModelKernels& kernels() const { return m_kernels; }
  // Once per step, before the optimizer's update (which may write float8 weights with them): fp8
  // scales of the next step come from this step's amax.
  void end_step();

  // The next forward's weights, written by the optimizer in its pass (Optimizer::step_in_groups'
  // copies): in the compute dtype, one flat buffer for the unit allocated here and a view per
  // parameter returned; under amp fp8 a block's four matmul weights instead as their float8 casts
  // (Fp8Linear::new_weight_copy; the norms get none). The fused forward of a unit reads its copies
  // instead of casting and then lets go of them (what backward needs, autograd keeps), so they live
  // as long as the casts they replace. drop_weight_copies() when the optimizer did not write them.
  // (One unit at a time, so that the optimizer frees each unit's gradients as it goes.)
  WeightCopies new_weight_copies(size_t unit);  // the unit's parameters' copies, in order
  int64_t weight_copy_bytes(size_t unit) const;  // what new_weight_copies(unit) allocates
  void drop_weight_copies();
  bool has_weight_copies() const;

  const config::ModelDims& dims() const { return m_dims; }
  std::vector<ModelUnit>& units() { return m_units; }
  const std::vector<ModelUnit>& units() const { return m_units; }
  std::vector<at::Tensor> parameters() const;  // in forward order
  // ModelKernels::half_weight_grads: the gradients the backward wrote, one per parameter in
  // parameters()' order (undefined where it wrote none: other parameters, or the mode off), handed
  // over and forgotten here, as zero_grad(set_to_none=True) forgets .grad.
  std::vector<at::Tensor> take_half_weight_grads();

  // Forward of one unit. `x` is token ids [B, T] for the embedding, activations [B, T, D] for the
  // blocks; the head returns logits [B, T, V]. `params` are the unit's parameters to use (the
  // unit's own, or gathered full parameters under FSDP).
  at::Tensor unit_forward(size_t unit, const at::Tensor& x, const std::vector<at::Tensor>& params) const;
  // The head unit with the loss: mean cross-entropy of the next-token targets [B, T], fp32 0-dim.
  // The fused path never materialises the logits in fp32 (nor, in full, at all).
  at::Tensor head_loss(const at::Tensor& x, const std::vector<at::Tensor>& params, const at::Tensor& targets) const;
  // Rotary tables for sequence length `seq_len` on `device` (float32), cached.
  void prepare_rope(int64_t seq_len, c10::Device device);

  int64_t parameter_count() const;
  int64_t matmul_parameter_count() const;  // metrics::llama_matmul_parameters (PaLM convention)
  // Training FLOPs per token: 6 * N_matmul + 12 * L * D * T (PaLM, appendix B).
  double flops_per_token(int64_t seq_len) const;
  static const char* flops_formula() { return "6*N_matmul + 12*L*D*T (PaLM appendix B)"; }

  // The next embedding forward's distinct tokens and each position's index among them
  // (fused::distinct_tokens of its ids, on the device), found by the caller where the batch is on
  // the host; read by that forward only (sparse_embedding_grad with tied embeddings). Without
  // them that forward finds them on the device.
  void set_lookup_rows(at::Tensor rows, at::Tensor compact) const {
    m_lookup_rows = std::move(rows);
    m_lookup_compact = std::move(compact);
  }

  // Per-unit parameter shapes (used by FSDP to rebuild views of gathered buffers).
  static std::vector<std::vector<int64_t>> unit_shapes(const config::ModelDims& dims, size_t unit);
  size_t unit_count() const { return m_units.size(); }

 private:
  at::Tensor block_forward(const at::Tensor& x, const std::vector<at::Tensor>& p) const;
  at::Tensor fused_block_forward(size_t block, const at::Tensor& x, const std::vector<at::Tensor>& p) const;
  at::Tensor block_linear(size_t block, int which, const at::Tensor& x, const at::Tensor& w) const;
  Fp8Linear& fp8_linear(size_t block, size_t which) const { return *m_fp8[4 * block + which]; }  // amp fp8
  // The output head's matrix: the head unit's own, or the embedding's when tied.
  const at::Tensor& output_weight(const std::vector<at::Tensor>& head_params) const;
  // The compute-dtype copy of a unit's parameter (undefined when none is pending), and giving up
  // a unit's copies once its forward read them.
  at::Tensor weight_copy(size_t unit, size_t param) const;
  const WeightCopy* fp8_weight_copy(size_t unit, size_t param) const;  // null when none is pending
  void release_weight_copies(size_t unit) const;
  // Where a block's matmul weight's backward puts its compute-dtype gradient; null when the mode is off.
  at::Tensor* half_grad_slot(size_t unit, size_t param) const;
  at::Tensor output_weight_copy() const;
  void release_output_weight_copy() const;

  config::ModelDims m_dims;
  ModelKernels m_kernels;
  std::vector<std::unique_ptr<Fp8Linear>> m_fp8;  // per block: wqkv, wo, w13, w2
  std::vector<ModelUnit> m_units;
  at::Tensor m_rope_cos, m_rope_sin;  // [T, hd/2] float32
  // Pending weight copies per unit (flat buffer, then views); released by the forward that reads
  // them, hence mutable: reading them is what a const forward does once.
  mutable std::vector<at::Tensor> m_copy_flat;
  mutable std::vector<WeightCopies> m_copy_views;
  mutable at::Tensor m_lookup_rows, m_lookup_compact;  // set_lookup_rows
  // half_weight_grads: per unit and parameter, sized once by set_kernels (the backward holds
  // pointers into it); written by the backward, hence mutable.
  mutable std::vector<std::vector<at::Tensor>> m_half_grads;
};

// Builds leaf parameter views over a flat buffer with the given shapes.
std::vector<at::Tensor> views_of(const at::Tensor& flat, const std::vector<std::vector<int64_t>>& shapes);
int64_t numel_of(const std::vector<std::vector<int64_t>>& shapes);

}  // namespace tunebench::engine
