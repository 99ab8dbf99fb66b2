// The fused operations of `compile` as autograd Functions, each with its own backward.
//
// On CUDA tensors of a CUDA build they run the kernels of fused_kernels.cu; everywhere else (the
// CPU build, unusual shapes or dtypes) they run a composite ATen implementation of the same math,
// which is also the numerical reference the GPU check compares the kernels against. The CPU tests
// compare these hand-written backward formulas with autograd through the plain composite model.
//
// Dtype conventions follow autocast as the composite model uses it: the residual stream keeps its
// dtype (fp32 under autocast), everything a matmul reads is in the compute dtype `compute`, and
// weight gradients come back in the weight's own dtype (fp32 master weights get fp32 gradients
// straight from the GEMM, with no bf16 round trip).
#pragma once

#include <tuple>
#include <vector>

#include <ATen/ATen.h>

namespace tunebench::engine::fused {

// True when this worker was built with the CUDA kernels.
bool kernels_built();
// Off: every op runs its composite reference, also on the GPU (the kernel check compares both).
void set_kernels_enabled(bool enabled);
bool kernels_enabled();

// y = w * normalise(x), computed in fp32, returned in `out_dtype`.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, at::ScalarType out_dtype, double eps);

// (x, rms_norm(x, w)): x passes through the node, so the gradient that reaches x along the residual
// stream comes back to this node and its backward kernel adds it to the norm's, where autograd
// would add the two gradients of x in a kernel of its own. For the first norm of a block, whose x
// the block's residual add reads too.
std::tuple<at::Tensor, at::Tensor> rms_norm_keep(const at::Tensor& x, const at::Tensor& w, at::ScalarType out_dtype,
                                                 double eps);

// h = x + r (in x's dtype) and y = rms_norm(h, w) in `out_dtype`, in one pass: the residual add
// that feeds the next norm. Returns (h, y).
std::tuple<at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w,
                                                at::ScalarType out_dtype, double eps);

// The norms' forward and backward outside autograd, as the three norm nodes above run them, for the
// float8 nodes that begin with their norm (kernels/fp8_linear.h). Forward: h = x + r in x's dtype
// (x itself, made contiguous, without r), y = rms_norm(h, w) in `out_dtype`, rstd [rows] in fp32.
struct NormOut {
  at::Tensor h, y, rstd;
};
NormOut norm_forward(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w, at::ScalarType out_dtype,
                     double eps);
// Backward from dy (y's gradient; undefined: zeros) and dh (the gradient reaching h directly, or
// undefined): dx in h's dtype, dr (with `residual`: r's gradient, in r_dtype) and dw in w's dtype.
struct NormGrads {
  at::Tensor dx, dr, dw;
};
NormGrads norm_backward(const at::Tensor& h, const at::Tensor& w, const at::Tensor& rstd, const at::Tensor& dy,
                        const at::Tensor& dh, bool residual, at::ScalarType r_dtype, at::ScalarType y_dtype);

// Interleaved rotary embedding of q and k straight from the fused projection qkv [B, T, W], W =
// (heads + 2 kv_heads) x hd (q's heads, then k's, then v's); cos/sin: float [T >= seq, hd/2].
// Returns q [B, T, heads, hdp] and k, v [B, T, kv_heads, hdp] (v copied), contiguous; hdp >= hd
// pads each head with zeros (0: hdp = hd), which is what flash attention needs for head sizes that
// are no multiple of 8, written here instead of copied by SDPA.
std::tuple<at::Tensor, at::Tensor, at::Tensor> rope_qkv(const at::Tensor& qkv, const at::Tensor& cos,
                                                        const at::Tensor& sin, int64_t heads, int64_t kv_heads,
                                                        int64_t padded_head_dim = 0);

// rope_qkv's backward: dqkv [B, T, W] from the gradients of q, k and v (any of them undefined:
// zeros; strided as SDPA hands them back), as its own kernel or composite path computes it. Undefined
// when all three are. `c`, `s`: cos/sin narrowed to the sequence, contiguous.
at::Tensor rope_qkv_grad(const std::vector<at::Tensor>& dqkv_parts, const at::Tensor& c, const at::Tensor& s,
                         int64_t heads, int64_t kv_heads, int64_t head_dim);
// Those gradients as the kernels take them: undefined ones as zeros, each with a unit last stride
// (empty when all three are undefined).
std::vector<at::Tensor> rope_qkv_grad_inputs(std::vector<at::Tensor> dqkv_parts, int64_t heads, int64_t kv_heads);

// The composite rotation: pairs (x[2i], x[2i+1]) of x [B, T, H, hd] rotated by t * f_i with
// cos/sin [T, hd/2], in fp32, returned in x's dtype; `inverse` applies the transpose (backward).
// The model's composite path calls it too, so both paths share one definition.
at::Tensor rotate_pairs(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool inverse = false);

// silu(g) * u of gu = [g | u] along the last dimension.
at::Tensor swiglu(const at::Tensor& gu);

// x @ w^T in `compute` (w cast once if it is not already), with dW computed in w's dtype.
// `w_compute`, when given, is w already in `compute` (the optimizer's copy): read instead of a cast.
// `dw_half`, when given: dW is computed in `compute` instead and put there (added when it holds
// one), and autograd gets no gradient for w (model/llama.h: ModelKernels::half_weight_grads).
at::Tensor linear(const at::Tensor& x, const at::Tensor& w, at::ScalarType compute, const at::Tensor& w_compute = {},
                  at::Tensor* dw_half = nullptr);

// residual + x @ w^T, the block's closing add in the same node as its last matmul (linear's
// dtypes; the sum in the residual's dtype, as at::add gives it).
at::Tensor linear_residual(const at::Tensor& x, const at::Tensor& w, const at::Tensor& residual, at::ScalarType compute,
                           const at::Tensor& w_compute = {}, at::Tensor* dw_half = nullptr);

// h + y with the result in h's dtype, bit for bit what at::add gives, in one vectorised kernel on
// the GPU (ATen converts element by element when the dtypes differ). No autograd: for the forward
// of the nodes that end a block.
at::Tensor residual_add(const at::Tensor& h, const at::Tensor& y);

// at::embedding(w, ids), whose gradient for w is sparse: the rows of the batch's distinct tokens
// (sorted, coalesced), each the sum at::embedding's own backward gives it. Autograd adds it to a
// dense gradient of w (a tied head's) in place, touching those rows only; the sums and the add are
// bit for bit the dense path's. For a w that has another, dense, use in the step: alone its
// gradient would be sparse. `rows` and `compact` are distinct_tokens(ids) on ids' device, when the
// caller has them (from the batch on the host); without them they are found here, on the device,
// which synchronises with it once.
at::Tensor embedding_rows(const at::Tensor& w, const at::Tensor& ids, at::Tensor rows = {}, at::Tensor compact = {});
// The distinct tokens of `ids`, sorted (int64), and each position's index among them (ids' shape).
std::pair<at::Tensor, at::Tensor> distinct_tokens(const at::Tensor& ids);

// mean over rows of cross_entropy(h @ w^T, targets) without ever holding fp32 logits: logits are
// made a chunk of rows at a time in `compute`, overwritten by their gradient in the same kernel
// that computes the loss, and folded into dh and dw at once (Liger's fused linear cross-entropy).
// h: [N, D], w: [V, D], targets: int64 [N]. Returns the fp32 loss (0-dim). `chunk_rows` 0 picks
// chunks of at most 2^28 logits.
at::Tensor linear_cross_entropy(const at::Tensor& h, const at::Tensor& w, const at::Tensor& targets,
                                at::ScalarType compute, int64_t chunk_rows = 0, const at::Tensor& w_compute = {});

}  // namespace tunebench::engine::fused
