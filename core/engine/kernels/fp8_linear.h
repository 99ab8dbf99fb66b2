// One linear layer's float8 matmuls (amp fp8), with delayed per-tensor scaling as in Transformer
// Engine: activations and weights in e4m3, output gradients in e5m2, each tensor's scale taken
// from its amax of the previous step. The cast kernels record the new amax while they cast, so
// scaling costs no extra pass over the data and no host synchronisation; the very first use of
// each tensor measures its amax once first.
//
// The three GEMMs (y = x w^T, dx = dy w, dw = dy^T x) run through at::_scaled_mm, which wants its
// first operand row-major and its second column-major; the casts therefore also write the
// transposed copies backward needs (x^T, w^T, dy^T), in one pass each. Only x^T and w^T (1 byte
// per element) are kept for backward, not the bf16 activations.
//
// The weight's two casts can come from the optimizer instead (new_weight_copy): its AdamW kernel
// writes them in its own pass, as Transformer Engine's optimizers do, and the forward then reads no
// fp32 weight at all. end_step() comes before that update: the update scales the weights it writes
// with the history the roll has just written, as the next forward's cast would have.
//
// Needs a CUDA build with libtorch >= 2.1 and a Hopper GPU; elsewhere forward() throws.
#pragma once

#include <string>
#include <tuple>

#include <ATen/ATen.h>

#include "core/engine/optim/weight_copy.h"

namespace tunebench::engine {

class Fp8Linear {
 public:
  Fp8Linear();
  // y = x @ w^T in bf16, differentiable in x and w (w may be fp32 master weights or bf16).
  // `copy` (optional): w already cast by the optimizer (new_weight_copy, filled by its AdamW
  // kernel with this linear's scale): read instead of casting w.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const WeightCopy* copy = nullptr);
  // Creates the scaling state on first use and takes the optimizer's copy (if any) for the next
  // forward (forward() and the fp8 nodes below call it).
  void prepare(const at::Tensor& x, const WeightCopy* copy);
  // Room for the optimizer to write w's next value as float8, with this linear's weight slots;
  // undefined before the first forward (which creates the scaling state) or for a w that is not
  // a 2-D fp32 tensor.
  WeightCopy new_weight_copy(const at::Tensor& w);
  // Once per step, before the optimizer's update: the amax seen this step becomes the scaling
  // history of the weights the update writes and of the next step's casts.
  void end_step();

  // Device state, slots x, w, dy, 16 bytes apart (public for the autograd Function and tests).
  at::Tensor amax_history, amax_current, inv_scale;
  at::Tensor slot_scale[3];  // inv_scale's scalar of each slot, as the float8 GEMMs take it (views)
  bool measured_forward = false, measured_backward = false;  // first-use amax taken
  at::Tensor next_w8, next_w8t;  // the copy handed to the forward running now (consumed by it)
};

// The block's first half up to attention under amp fp8: its norm, the q/k/v projection and the
// rotary embedding, (x, q, k, v) with (q, k, v) = fused::rope_qkv(linear.forward(n, w, copy), cos,
// sin, heads, kv_heads, padded_head_dim), n = rms_norm(x, norm_w) in `compute`, and x passed
// through (as fused::rms_norm_keep passes it: the residual stream's gradient comes back here and
// the norm's backward kernel adds it). One autograd node: the norm writes the projection's float8
// input in the pass that computes it (kernels::rms_norm_fp8), and backward casts the rotation's
// inverse to float8 as it computes it, instead of a 16-bit n and dqkv going through memory and cast
// kernels of their own. The values of rms_norm_keep, Fp8Linear and rope_qkv, bit for bit.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fp8_norm_qkv_rope(
    const at::Tensor& x, const at::Tensor& norm_w, double eps, at::ScalarType compute, const at::Tensor& w,
    const at::Tensor& cos, const at::Tensor& sin, int64_t heads, int64_t kv_heads, int64_t padded_head_dim,
    Fp8Linear& linear, const WeightCopy* copy = nullptr);

// The block's second half under amp fp8: h = x + r (fused::add_rms_norm's residual add), then
// h + (silu(n w_g^T) * (n w_u^T)) w2^T with n = rms_norm(h, norm_w) in `compute` and w13 = [w_g; w_u],
// as one autograd node over the two linears `up` (w13) and `down` (w2). The norm writes w13's float8
// input, the SwiGLU kernel w2's, and in backward w13's float8 output gradient, in the pass that
// computes them, and w2's output gradient is cast from the residual's gradient as it comes (fp32
// under autocast), so none of them goes through 16-bit memory and a cast kernel of its own (as
// Transformer Engine's LayerNormMLP). The values of add_rms_norm, then h + down.forward(
// fused::swiglu(up.forward(n))), bit for bit.
at::Tensor fp8_norm_swiglu_mlp(const at::Tensor& x, const at::Tensor& r, const at::Tensor& norm_w, double eps,
                               at::ScalarType compute, const at::Tensor& w13, const at::Tensor& w2, Fp8Linear& up,
                               Fp8Linear& down, const WeightCopy* c13 = nullptr, const WeightCopy* c2 = nullptr);

// True when this build can run fp8 on the current CUDA device (message says why not otherwise).
bool fp8_supported(std::string* why);

}  // namespace tunebench::engine
