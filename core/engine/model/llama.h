// A LLaMA-style decoder (RMSNorm, rotary embeddings, SwiGLU, causal SDPA), written as a list of
// units so that parallelism can be applied from outside (torchtitan's habit): unit 0 is the token
// embedding, units 1..L the transformer blocks, unit L+1 the final norm and output head.
//
// Each unit's parameters are views into one flat buffer of that unit (FSDP shards and gathers
// whole units; DDP and the optimizer iterate parameters). The forward math matches
// scripts/pytorch_reference.py line by line so both run the same network.
// Deliberately absent: dropout, KV cache, grouped-query attention, weight tying.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"

namespace tunebench::engine {

// How the model computes; the trainer sets it from the config. The composite path (the default)
// is plain ATen ops meant to run under autocast, line by line the reference script. The fused path
// (`compile` fused) calls kernels/fused_ops.h with explicit dtypes and runs without autocast: the
// residual stream keeps the embedding's dtype, every matmul reads `compute`.
struct ModelKernels {
  bool fused = false;
  at::ScalarType compute = at::kFloat;
  bool fp8 = false;  // the blocks' matmuls in float8 (kernels/fp8_linear.h); needs `fused`
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
  // After every optimizer step: fp8 scales of the next step come from this step's amax.
  void end_step();

  const config::ModelDims& dims() const { return m_dims; }
  std::vector<ModelUnit>& units() { return m_units; }
  const std::vector<ModelUnit>& units() const { return m_units; }
  std::vector<at::Tensor> parameters() const;  // in forward order

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
  int64_t matmul_parameter_count() const;  // excludes the embedding table (PaLM convention)
  // Training FLOPs per token: 6 * N_matmul + 12 * L * D * T (PaLM, appendix B).
  double flops_per_token(int64_t seq_len) const;
  static const char* flops_formula() { return "6*N_matmul + 12*L*D*T (PaLM appendix B)"; }

  // Per-unit parameter shapes (used by FSDP to rebuild views of gathered buffers).
  static std::vector<std::vector<int64_t>> unit_shapes(const config::ModelDims& dims, size_t unit);
  size_t unit_count() const { return m_units.size(); }

 private:
  at::Tensor block_forward(const at::Tensor& x, const std::vector<at::Tensor>& p) const;
  at::Tensor fused_block_forward(size_t block, const at::Tensor& x, const std::vector<at::Tensor>& p) const;
  at::Tensor block_linear(size_t block, int which, const at::Tensor& x, const at::Tensor& w) const;

  config::ModelDims m_dims;
  ModelKernels m_kernels;
  std::vector<std::unique_ptr<Fp8Linear>> m_fp8;  // per block: wqkv, wo, w13, w2
  std::vector<ModelUnit> m_units;
  at::Tensor m_rope_cos, m_rope_sin;  // [T, hd/2] float32
};

// Builds leaf parameter views over a flat buffer with the given shapes.
std::vector<at::Tensor> views_of(const at::Tensor& flat, const std::vector<std::vector<int64_t>>& shapes);
int64_t numel_of(const std::vector<std::vector<int64_t>>& shapes);

}  // namespace tunebench::engine
