// Fused CUDA kernels of the worker's `compile` mode, torch-free: raw device pointers, a
// CUDA stream, plain sizes. core/engine/kernels/fused_ops.cpp wraps them as autograd Functions.
//
// Every launcher returns false, launching nothing, when the shapes, alignment or element types
// are outside what its kernel covers; the caller then runs the composite ATen reference of the
// same op (core/engine/kernels/fused_reference.cpp). Kernel errors are left for the caller's
// launch check (cudaGetLastError). Arithmetic is fp32 inside every kernel; inputs and outputs are
// fp32, bf16 or fp16 rows, contiguous, 16-byte aligned, with widths that are multiples of 8.
//
// Deliberately absent: anything that allocates, synchronises or knows about autograd.
#pragma once

#include <cstdint>

typedef struct CUstream_st* cudaStream_t;

namespace tunebench::kernels {

enum class ElemType : int { F32 = 0, BF16 = 1, F16 = 2 };
enum class Fp8Kind : int { E4M3 = 0, E5M2 = 1 };

// ---- RMSNorm (optionally fused with the residual add that feeds it) ------------------------
// h = x + r (when r is given), y = round_y(w * round_x(h * rstd)), rstd = rsqrt(mean(h^2) + eps).
// x and h have type tx, r and y type ty (the compute dtype), w type tw. rstd: float[rows].
bool rms_norm_forward(ElemType tx, ElemType tw, ElemType ty, const void* x, const void* r, const void* w, void* h,
                      void* y, float* rstd, int64_t rows, int64_t cols, float eps, cudaStream_t stream);

// Blocks (and so rows of dw_partial) the backward launch uses for `rows`.
int rms_norm_backward_blocks(int64_t rows, int sm_count);
// From dy (type ty) and, when given, dh (the gradient reaching h directly, type tx):
// dx = dh + rstd * (dn - n * mean(dn * n)), dn = dy * w, n = h * rstd, written as tx into dx and,
// when dr is given, as ty into dr (the residual branch's gradient). dw_partial:
// float[blocks][cols], one partial sum of dy * n per block (the caller sums the rows).
// `dh_added` (without dr): dh is added to the rounded fp32 norm gradient, bit for bit what adding
// the two gradients in a separate kernel gives; otherwise the last multiply and the add are one
// fused multiply-add.
bool rms_norm_backward(ElemType tx, ElemType tw, ElemType ty, const void* h, const void* w, const void* dy,
                       const void* dh, const float* rstd, void* dx, void* dr, float* dw_partial, int blocks,
                       int64_t rows, int64_t cols, cudaStream_t stream, bool dh_added = false);

// ---- residual add --------------------------------------------------------------------------
// out = h + y in fp32, stored as tx: what at::add(h, y) gives when the result has h's type (h and
// out type tx, y type ty; the type pairs of the norms: fp32 with any, or 16-bit with the same).
// n elements, a multiple of 8; pointers 16-byte aligned. The block's closing add, which ATen runs
// element by element when the types differ.
bool residual_add(ElemType tx, ElemType ty, const void* h, const void* y, void* out, int64_t n, cudaStream_t stream);

// ---- interleaved rotary embedding of q and k, from the fused qkv projection ----------------
// qkv: [B, T, W] (type t), W = (heads + 2 kv_heads) x head_dim: q's heads, k's, v's. cos/sin:
// float [T, head_dim/2]. Writes q [B, T, heads, hdp] and k, v [B, T, kv_heads, hdp] contiguous,
// q and k rotated, v copied; hdp >= head_dim pads each head with zeros (flash attention wants a
// multiple of 8). Pairs (2i, 2i+1) rotate by angle t * f_i, as the reference. Any even head_dim:
// the vector width is the largest of 8, 4, 2 elements that divides it (and hdp).
bool rope_qkv_forward(ElemType t, const void* qkv, const float* cos, const float* sin, void* q, void* k, void* v,
                      int64_t batch, int64_t seq, int64_t heads, int64_t kv_heads, int64_t head_dim,
                      int64_t padded_head_dim, cudaStream_t stream);

// Strides in elements of a [B, T, heads, hdp] gradient whose last dimension is contiguous.
struct Strides3 {
  int64_t b, t, h;
};
// The inverse rotation of dq and dk and the copy of dv (the first head_dim of each head; padding
// ignored), into dqkv [B, T, W] contiguous.
bool rope_qkv_backward(ElemType t, const void* dq, Strides3 sq, const void* dk, Strides3 sk, const void* dv,
                       Strides3 sv, const float* cos, const float* sin, void* dqkv, int64_t batch, int64_t seq,
                       int64_t heads, int64_t kv_heads, int64_t head_dim, cudaStream_t stream);

// ---- SwiGLU ---------------------------------------------------------------------------------
// gu: [rows, 2F] = [g | u] (the fused w1/w3 projection); out[r, j] = silu(g) * u, [rows, F].
bool swiglu_forward(ElemType t, const void* gu, void* out, int64_t rows, int64_t ffn, cudaStream_t stream);
// dgu = [dout * u * silu'(g) | dout * silu(g)], [rows, 2F]; silu(g) is recomputed, not saved.
bool swiglu_backward(ElemType t, const void* gu, const void* dout, void* dgu, int64_t rows, int64_t ffn,
                     cudaStream_t stream);

// ---- cross-entropy, loss and gradient in one pass over the logits --------------------------
// logits: [rows, vocab] (type t), overwritten in place by d(loss)/d(logits) * grad_scale, i.e.
// (softmax - onehot(target)) * grad_scale. loss_rows: float[rows], -log softmax[target].
// Targets outside [0, vocab) are a caller error (checked before the launch).
bool cross_entropy_forward_backward(ElemType t, void* logits, const int64_t* targets, float* loss_rows, int64_t rows,
                                    int64_t vocab, float grad_scale, cudaStream_t stream);

// ---- float8 casts with delayed per-tensor scaling ------------------------------------------
// scale = max_finite(kind) / amax_history (1 when the history is 0); dst = saturate(src * scale)
// as [rows, cols] and/or dst_t as [cols, rows] (either may be null); atomically raises
// *amax_current to max|src|; writes 1/scale to *inv_scale (the dequantisation factor that
// at::_scaled_mm takes). src has type ts; rows and cols are multiples of 16.
bool fp8_cast(ElemType ts, Fp8Kind kind, const void* src, int64_t rows, int64_t cols, const float* amax_history,
              float* amax_current, float* inv_scale, void* dst, void* dst_t, cudaStream_t stream);
// The same cast of an fp32 src rounded to `as` (bf16 or fp16) first: the bytes fp8_cast writes for
// src.to(as), without that 16-bit tensor.
bool fp8_cast_f32_as(ElemType as, Fp8Kind kind, const float* src, int64_t rows, int64_t cols, const float* amax_history,
                     float* amax_current, float* inv_scale, void* dst, void* dst_t, cudaStream_t stream);
// The same cast of SwiGLU's output, silu(g) * u of gu [rows, 2 ffn] (type t), computed on the way
// as swiglu_forward does and rounded to t as it stores it, as e4m3: the bytes fp8_cast writes for
// swiglu_forward's output, without the 16-bit product ever going through memory.
bool swiglu_fp8(ElemType t, const void* gu, int64_t rows, int64_t ffn, const float* amax_history, float* amax_current,
                float* inv_scale, void* dst, void* dst_t, cudaStream_t stream);
// Likewise swiglu_backward's dgu [rows, 2 ffn] for dout [rows, ffn], cast as e5m2 (one scale and
// one amax for the whole dgu).
bool swiglu_backward_fp8(ElemType t, const void* gu, const void* dout, int64_t rows, int64_t ffn,
                         const float* amax_history, float* amax_current, float* inv_scale, void* dst, void* dst_t,
                         cudaStream_t stream);
// Likewise rope_qkv_backward's dqkv [batch * seq, (heads + 2 kv_heads) * head_dim], cast as e5m2,
// for a head_dim that is a multiple of 16 and 16-bit gradients whose strides are multiples of 8.
bool rope_qkv_backward_fp8(ElemType t, const void* dq, Strides3 sq, const void* dk, Strides3 sk, const void* dv,
                           Strides3 sv, const float* cos, const float* sin, int64_t batch, int64_t seq, int64_t heads,
                           int64_t kv_heads, int64_t head_dim, const float* amax_history, float* amax_current,
                           float* inv_scale, void* dst, void* dst_t, cudaStream_t stream);
// rms_norm_forward (h and rstd as it writes them) with y cast as e4m3 on the way: the bytes fp8_cast
// writes for rms_norm_forward's y, without y going through memory (the norm in front of a float8
// linear). Shapes as rms_norm_fp8_takes says; dst and dst_t both given.
bool rms_norm_fp8_takes(int64_t rows, int64_t cols);  // rows and cols multiples of 16, cols up to 8192
bool rms_norm_fp8(ElemType tx, ElemType tw, ElemType ty, const void* x, const void* r, const void* w, void* h,
                  float* rstd, int64_t rows, int64_t cols, float eps, const float* amax_history, float* amax_current,
                  float* inv_scale, void* dst, void* dst_t, cudaStream_t stream);
// *amax = max(*amax, max|src|) over n elements (the first step, which has no history yet).
bool fp8_amax(ElemType ts, const void* src, int64_t n, float* amax, cudaStream_t stream);
// For i < n: history[i] = current[i]; current[i] = 0 (once per optimizer step).
void fp8_roll_history(float* history, float* current, int n, cudaStream_t stream);

// ---- scaling by a device scalar ----------------------------------------------------------------
// x[i] *= *s for n fp32 elements in place (x 16-byte aligned), leaving x untouched when *s == 1,
// where the product is x itself. The fused loss's backward scales the head's weight gradient by
// the loss gradient this way: 1 in a plain step, 1/accumulation or the loss scale otherwise, and
// reading it on the host would synchronise (and break CUDA graph capture).
bool scale_in_place(float* x, int64_t n, const float* s, cudaStream_t stream);

// ---- AdamW over many fp32 tensors in one pass each ---------------------------------------------
// torch.optim.AdamW's update (decoupled weight decay, bias-corrected moments; as at::_fused_adamw_)
// for `count` tensors: p -= lr * wd * p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps), t = *step (a device float the
// caller increments, so a CUDA graph replays it correctly). Every tensor is read and written once,
// 16 bytes per access where its pointers are 16-byte aligned and its length a multiple of 4, in
// chunks of 64 Ki elements spread over the whole GPU in launches of up to 64 tensors.
// `copy`, when given, receives the updated parameter rounded to `copy_type` (BF16 or F16): the
// compute-dtype weight the next forward reads instead of casting (engine/model/llama.h).
// `grad` is fp32, or bf16 where `grad_bf16` (read as its exact fp32 value: the same update as from
// that gradient in fp32, 2 bytes a parameter less to read; 8-byte accesses then).
struct AdamwTensor {
  float* param;
  const void* grad;
  float* exp_avg;
  float* exp_avg_sq;
  int64_t numel;
  void* copy = nullptr;
  bool grad_bf16 = false;
};
bool adamw_step(const AdamwTensor* tensors, int count, const float* step, float lr, float beta1, float beta2,
                float weight_decay, float eps, ElemType copy_type, cudaStream_t stream);

// The same update for the weights of float8 linears (kernels/fp8_linear.h), fp32 [rows, cols] with
// rows and cols multiples of 16, in 64x64 tiles: beside p, m and v each tile writes the updated
// weight as e4m3 in both layouts the linear's GEMMs read ([rows, cols] to `fp8`, [cols, rows] to
// `fp8_t`), scaled as fp8_cast would (max_finite / *amax_history), raises *amax_current to its
// max|p| and writes 1/scale to *inv_scale: exactly what the next forward's cast of the weight would
// produce, without that pass over the fp32 weight. The parameter's update is adamw_step's, to the bit.
struct AdamwFp8Tensor {
  float* param;
  const float* grad;
  float* exp_avg;
  float* exp_avg_sq;
  int64_t rows, cols;
  void* fp8;
  void* fp8_t;
  const float* amax_history;
  float* amax_current;
  float* inv_scale;
};
bool adamw_fp8_step(const AdamwFp8Tensor* tensors, int count, const float* step, float lr, float beta1, float beta2,
                    float weight_decay, float eps, cudaStream_t stream);

}  // namespace tunebench::kernels
