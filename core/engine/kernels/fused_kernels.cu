// The fused kernels behind `compile` (see fused_kernels.h for each contract). Built only in CUDA
// builds, for sm_90 (H100/H200) and whatever CMAKE_CUDA_ARCHITECTURES names.
//
// Structure follows llm.c's layernorm/fused_classifier and what Inductor emits for the same
// graphs: one block per row for row-wise reductions (RMSNorm, cross-entropy), a grid-stride loop
// over 8-element (16-byte) chunks for pointwise ops, fp32 arithmetic, one rounding at the store.
// Rows that one thread touches twice stay in registers (RMSNorm) or in L2 (cross-entropy's
// second pass over a 64 KB row), so each tensor crosses HBM once per direction.
#include "core/engine/kernels/fused_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tunebench::kernels {
namespace {

constexpr int kVec = 8;  // elements per thread access: 16 bytes of bf16/fp16, 32 of fp32

// ============================================================================================
// Element access
// ============================================================================================

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}

// The value `v` takes once stored as T (what the composite ops round to between kernels).
template <typename T>
__device__ __forceinline__ float round_to(float v) {
  return to_f(from_f<T>(v));
}

__device__ __forceinline__ void load8(const float* p, float* v) {
  const float4 a = reinterpret_cast<const float4*>(p)[0];
  const float4 b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void load8(const __nv_bfloat16* p, float* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    v[2 * i] = f.x, v[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void load8(const __half* p, float* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(h[i]);
    v[2 * i] = f.x, v[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void store8(float* p, const float* v) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void store8(__nv_bfloat16* p, const float* v) {
  uint4 u;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = u;
}
__device__ __forceinline__ void store8(__half* p, const float* v) {
  uint4 u;
  __half2* h = reinterpret_cast<__half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = u;
}

// ============================================================================================
// Reductions
// ============================================================================================

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Sum over the block, returned to every thread. `shared` holds 32 floats; the leading barrier
// makes back-to-back calls on the same buffer safe.
__device__ float block_sum(float v, float* shared) {
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  return warp_sum(lane < warps ? shared[lane] : 0.f);
}
__device__ float block_max(float v, float* shared) {
  v = warp_max(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  return warp_max(lane < warps ? shared[lane] : -INFINITY);
}
// Online softmax state (running max m, sum of exp(x - m)); merging handles empty states.
struct MaxSum {
  float m, s;
};
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}
__device__ MaxSum block_max_sum(MaxSum v, MaxSum* shared) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = merge(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)});
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : MaxSum{-INFINITY, 0.f};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = merge(v, MaxSum{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)});
  return v;
}

// ============================================================================================
// RMSNorm
// ============================================================================================

// One block per row; thread t owns the 8-element chunks t, t + blockDim, ... of the row, which
// stay in registers between the sum of squares and the normalisation.
template <typename TX, typename TW, typename TY, int kChunks, bool kResidual>
__global__ void __launch_bounds__(256)
    rms_norm_fwd_kernel(const TX* __restrict__ x, const TY* __restrict__ r, const TW* __restrict__ w,
                        TX* __restrict__ h, TY* __restrict__ y, float* __restrict__ rstd, int cols, float eps) {
  __shared__ float red[32];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * cols;
  float v[kChunks][kVec];
  float ss = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = (c * blockDim.x + threadIdx.x) * kVec;
    if (col >= cols) continue;
    load8(x + base + col, v[c]);
    if constexpr (kResidual) {
      float rv[kVec];
      load8(r + base + col, rv);
#pragma unroll
      for (int i = 0; i < kVec; ++i) v[c][i] = round_to<TX>(v[c][i] + rv[i]);
      store8(h + base + col, v[c]);
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) ss += v[c][i] * v[c][i];
  }
  const float rs = rsqrtf(block_sum(ss, red) / static_cast<float>(cols) + eps);
  if (threadIdx.x == 0) rstd[blockIdx.x] = rs;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = (c * blockDim.x + threadIdx.x) * kVec;
    if (col >= cols) continue;
    float wv[kVec], o[kVec];
    load8(w + col, wv);
#pragma unroll
    for (int i = 0; i < kVec; ++i) o[i] = round_to<TX>(v[c][i] * rs) * wv[i];
    store8(y + base + col, o);
  }
}

// How dh joins dx: not at all; inside the multiply-add that ends dx (the residual norm's backward,
// as it always was); or added to dx's rounded fp32 value, bit for bit the sum autograd forms of x's
// two gradients (rms_norm_keep, which replaced that sum).
enum DhMode : int { kNoDh = 0, kDhFused = 1, kDhAdded = 2 };

// Grid-stride over rows; each block accumulates its rows' dw in registers and writes one
// partial row, so no atomics and a deterministic result.
template <typename TX, typename TW, typename TY, int kChunks, int kDh, bool kDr>
__global__ void __launch_bounds__(256)
    rms_norm_bwd_kernel(const TX* __restrict__ h, const TW* __restrict__ w, const TY* __restrict__ dy,
                        const TX* __restrict__ dh, const float* __restrict__ rstd, TX* __restrict__ dx,
                        TY* __restrict__ dr, float* __restrict__ dw_partial, int64_t rows, int cols) {
  __shared__ float red[32];
  float wv[kChunks][kVec], dw[kChunks][kVec];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = (c * blockDim.x + threadIdx.x) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i) dw[c][i] = 0.f, wv[c][i] = 0.f;
    if (col < cols) load8(w + col, wv[c]);
  }
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * cols;
    const float rs = rstd[row];
    float n[kChunks][kVec], dn[kChunks][kVec];
    float dot = 0.f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * blockDim.x + threadIdx.x) * kVec;
      if (col >= cols) continue;
      float hv[kVec], g[kVec];
      load8(h + base + col, hv);
      load8(dy + base + col, g);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        n[c][i] = hv[i] * rs;
        dn[c][i] = g[i] * wv[c][i];
        dot += dn[c][i] * n[c][i];
        dw[c][i] += g[i] * n[c][i];
      }
    }
    dot = block_sum(dot, red) / static_cast<float>(cols);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * blockDim.x + threadIdx.x) * kVec;
      if (col >= cols) continue;
      float o[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) o[i] = rs * (dn[c][i] - n[c][i] * dot);
      if constexpr (kDh == kDhFused) {
        float d[kVec];
        load8(dh + base + col, d);
#pragma unroll
        for (int i = 0; i < kVec; ++i) o[i] += d[i];
      } else if constexpr (kDh == kDhAdded) {  // no contraction into a multiply-add: _rn intrinsics
        float d[kVec];
        load8(dh + base + col, d);
#pragma unroll
        for (int i = 0; i < kVec; ++i) o[i] = __fadd_rn(__fmul_rn(rs, dn[c][i] - n[c][i] * dot), d[i]);
      }
      store8(dx + base + col, o);
      if constexpr (kDr) store8(dr + base + col, o);
    }
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = (c * blockDim.x + threadIdx.x) * kVec;
    if (col < cols) store8(dw_partial + static_cast<int64_t>(blockIdx.x) * cols + col, dw[c]);
  }
}

// ============================================================================================
// Rotary embedding of q and k
// ============================================================================================

// V consecutive elements as one aligned access (16 bytes for 8 bf16, 8 for 4, 4 for 2).
template <int V, typename T>
struct alignas(sizeof(T) * V > 16 ? 16 : sizeof(T) * V) VecOf {
  T x[V];
};
template <int V, typename T>
__device__ __forceinline__ void loadv(const T* p, float* v) {
  const VecOf<V, T> a = *reinterpret_cast<const VecOf<V, T>*>(p);
#pragma unroll
  for (int i = 0; i < V; ++i) v[i] = to_f(a.x[i]);
}
template <int V, typename T>
__device__ __forceinline__ void storev(T* p, const float* v) {
  VecOf<V, T> a;
#pragma unroll
  for (int i = 0; i < V; ++i) a.x[i] = from_f<T>(v[i]);
  *reinterpret_cast<VecOf<V, T>*>(p) = a;
}

// Where element `col` of a qkv row goes: part 0 = q, 1 = k, 2 = v; head within the part; d within the head.
struct QkvSlot {
  int part;
  int64_t head, d;
};
__device__ __forceinline__ QkvSlot qkv_slot(int64_t col, int64_t heads, int64_t kv_heads, int64_t head_dim) {
  const int64_t g = col / head_dim, d = col - g * head_dim;
  if (g < heads) return {0, g, d};
  if (g < heads + kv_heads) return {1, g - heads, d};
  return {2, g - heads - kv_heads, d};
}

// Pairs (2p, 2p+1) of `x` rotated by the angles whose cos/sin start at cr/sr (inverse: the
// transpose, the backward's rotation).
template <int V, bool kInverse>
__device__ __forceinline__ void rotate_pairs(const float* x, const float* cr, const float* sr, float* o) {
#pragma unroll
  for (int p = 0; p < V / 2; ++p) {
    const float c = cr[p], sn = kInverse ? -sr[p] : sr[p], x1 = x[2 * p], x2 = x[2 * p + 1];
    o[2 * p] = x1 * c - x2 * sn;
    o[2 * p + 1] = x1 * sn + x2 * c;
  }
}

// One thread per V elements of qkv; the thread holding a head's last chunk also writes the head's
// zero padding (fewer than 8 elements).
template <typename T, int V>
__global__ void rope_fwd_kernel(const T* __restrict__ qkv, const float* __restrict__ cos, const float* __restrict__ sin,
                                T* __restrict__ q, T* __restrict__ k, T* __restrict__ v, int64_t chunks, int64_t seq,
                                int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t hdp) {
  const int64_t width = (heads + 2 * kv_heads) * head_dim, half = head_dim / 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i * V;
    const int64_t row = e / width;  // b * seq + t
    const QkvSlot s = qkv_slot(e - row * width, heads, kv_heads, head_dim);
    T* const base = s.part == 0 ? q + row * heads * hdp : (s.part == 1 ? k : v) + row * kv_heads * hdp;
    T* const out = base + s.head * hdp + s.d;
    float xv[V];
    loadv<V>(qkv + e, xv);
    if (s.part == 2) {
      storev<V>(out, xv);
    } else {
      const int64_t t = row % seq;
      float o[V];
      rotate_pairs<V, false>(xv, cos + t * half + s.d / 2, sin + t * half + s.d / 2, o);
      storev<V>(out, o);
    }
    if (hdp > head_dim && s.d + V == head_dim)
      for (int64_t z = head_dim; z < hdp; ++z) base[s.head * hdp + z] = from_f<T>(0.f);
  }
}

// One thread per V elements of dqkv, reading the strided gradients (their padding is not read).
template <typename T, int V>
__global__ void rope_bwd_kernel(const T* __restrict__ dq, Strides3 sq, const T* __restrict__ dk, Strides3 sk,
                                const T* __restrict__ dv, Strides3 sv, const float* __restrict__ cos,
                                const float* __restrict__ sin, T* __restrict__ dqkv, int64_t chunks, int64_t seq,
                                int64_t heads, int64_t kv_heads, int64_t head_dim) {
  const int64_t width = (heads + 2 * kv_heads) * head_dim, half = head_dim / 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i * V;
    const int64_t row = e / width;
    const int64_t b = row / seq, t = row % seq;
    const QkvSlot s = qkv_slot(e - row * width, heads, kv_heads, head_dim);
    const Strides3 st = s.part == 0 ? sq : s.part == 1 ? sk : sv;
    const T* src = s.part == 0 ? dq : s.part == 1 ? dk : dv;
    float g[V];
    loadv<V>(src + b * st.b + t * st.t + s.head * st.h + s.d, g);
    if (s.part == 2) {
      storev<V>(dqkv + e, g);
      continue;
    }
    float o[V];
    rotate_pairs<V, true>(g, cos + t * half + s.d / 2, sin + t * half + s.d / 2, o);
    storev<V>(dqkv + e, o);
  }
}

// ============================================================================================
// SwiGLU
// ============================================================================================

__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + __expf(-x)); }

// One element of silu(g) * u, and its gradients for the output gradient d: the SwiGLU kernels' math,
// shared with the float8 casts that compute it on the way (SwigluValues, SwigluGradValues).
__device__ __forceinline__ float swiglu_value(float g, float u) { return g * sigmoid(g) * u; }
__device__ __forceinline__ void swiglu_grads(float g, float u, float d, float& dg, float& du) {
  const float s = sigmoid(g);
  du = d * g * s;
  dg = d * u * s * (1.f + g * (1.f - s));
}

template <typename T>
__global__ void swiglu_fwd_kernel(const T* __restrict__ gu, T* __restrict__ out, int64_t chunks, int64_t ffn) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i * kVec;
    const int64_t row = e / ffn, j = e - row * ffn;
    float g[kVec], u[kVec], o[kVec];
    load8(gu + row * 2 * ffn + j, g);
    load8(gu + row * 2 * ffn + ffn + j, u);
#pragma unroll
    for (int k = 0; k < kVec; ++k) o[k] = swiglu_value(g[k], u[k]);
    store8(out + e, o);
  }
}

template <typename T>
__global__ void swiglu_bwd_kernel(const T* __restrict__ gu, const T* __restrict__ dout, T* __restrict__ dgu,
                                  int64_t chunks, int64_t ffn) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i * kVec;
    const int64_t row = e / ffn, j = e - row * ffn;
    float g[kVec], u[kVec], d[kVec], dg[kVec], du[kVec];
    load8(gu + row * 2 * ffn + j, g);
    load8(gu + row * 2 * ffn + ffn + j, u);
    load8(dout + e, d);
#pragma unroll
    for (int k = 0; k < kVec; ++k) swiglu_grads(g[k], u[k], d[k], dg[k], du[k]);
    store8(dgu + row * 2 * ffn + j, dg);
    store8(dgu + row * 2 * ffn + ffn + j, du);
  }
}

// ============================================================================================
// Cross-entropy: loss and gradient in place, one block per row
// ============================================================================================

template <typename T, int V>
__global__ void __launch_bounds__(512)
    cross_entropy_kernel(T* logits, const int64_t* __restrict__ targets, float* __restrict__ loss_rows, int64_t vocab,
                         float grad_scale) {
  __shared__ MaxSum red[32];
  __shared__ float target_logit;
  T* row = logits + static_cast<int64_t>(blockIdx.x) * vocab;
  const int64_t target = targets[blockIdx.x];
  const bool valid = target >= 0 && target < vocab;
  if (threadIdx.x == 0) target_logit = valid ? to_f(row[target]) : NAN;  // read before any write
  MaxSum st{-INFINITY, 0.f};
  for (int64_t col = threadIdx.x * V; col < vocab; col += static_cast<int64_t>(blockDim.x) * V) {
    float v[V];
    loadv<V>(row + col, v);
    float m = v[0];
#pragma unroll
    for (int i = 1; i < V; ++i) m = fmaxf(m, v[i]);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < V; ++i) s += __expf(v[i] - m);
    st = merge(st, MaxSum{m, s});
  }
  st = block_max_sum(st, red);  // its barriers also publish target_logit
  const float lse = st.m + __logf(st.s);
  if (threadIdx.x == 0) loss_rows[blockIdx.x] = lse - target_logit;
  for (int64_t col = threadIdx.x * V; col < vocab; col += static_cast<int64_t>(blockDim.x) * V) {
    float v[V];
    loadv<V>(row + col, v);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = (__expf(v[i] - lse) - (col + i == target ? 1.f : 0.f)) * grad_scale;
    storev<V>(row + col, v);
  }
}

// ============================================================================================
// float8 casts
// ============================================================================================

template <Fp8Kind K>
struct Fp8Traits;
template <>
struct Fp8Traits<Fp8Kind::E4M3> {
  static constexpr float kMax = 448.f;
  static constexpr __nv_fp8_interpretation_t kInterp = __NV_E4M3;
};
template <>
struct Fp8Traits<Fp8Kind::E5M2> {
  static constexpr float kMax = 57344.f;
  static constexpr __nv_fp8_interpretation_t kInterp = __NV_E5M2;
};

__device__ __forceinline__ void atomic_max_nonneg(float* address, float v) {
  // Non-negative floats order like their bit patterns as signed integers.
  atomicMax(reinterpret_cast<int*>(address), __float_as_int(v));
}

constexpr int kTile = 64;  // 64x64 tile, 256 threads, 16 elements each
using Fp8Tile = uint8_t[kTile][kTile + 4];  // a tile's float8 bytes in shared memory

// The delayed scale: max_finite / the history's amax (1 when there is none yet).
template <Fp8Kind K>
__device__ __forceinline__ float delayed_scale(const float* amax_history) {
  const float hist = *amax_history;
  const float scale = hist > 0.f ? Fp8Traits<K>::kMax / hist : 1.f;
  return fminf(scale, 1e30f);
}

// The tile [row0, col0] of a [rows, cols] matrix, written transposed to dst_t ([cols, rows]) from
// shared memory: each of the block's 256 threads writes 16 consecutive rows of one column. Call
// after the barrier that completes `tile`.
__device__ __forceinline__ void store_tile_transposed(const Fp8Tile& tile, int64_t rows, int64_t cols, int64_t row0,
                                                      int64_t col0, uint8_t* __restrict__ dst_t) {
  const int tcol = threadIdx.x / 4, trow = (threadIdx.x % 4) * 16;
  const int64_t oc = col0 + tcol, orow = row0 + trow;
  if (oc < cols && orow < rows) {
    alignas(16) uint8_t q[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) q[i] = tile[trow + i][tcol];
    *reinterpret_cast<uint4*>(dst_t + oc * rows + orow) = *reinterpret_cast<const uint4*>(q);
  }
}

// Raises *amax_current to the block's largest |value| (each thread's `amax`).
__device__ __forceinline__ void record_amax(float amax, float* red, float* amax_current) {
  amax = block_max(amax, red);
  if (threadIdx.x == 0 && amax > 0.f) atomic_max_nonneg(amax_current, amax);
}

// Where a float8 cast's values come from, 16 consecutive columns of one row at a time
// (load(r, c, v)): a tensor as it is (TensorValues), or a SwiGLU pass or the rotary backward computed
// on the way and rounded to T as their own kernels would store it (SwigluValues, SwigluGradValues,
// RopeGradValues), so that no 16-bit intermediate goes through memory. A
// source of kParts parts fills kParts [rows, cols] matrices that sit side by side in each row of
// the destination (SwiGLU's gradient: d gate | d up).
template <typename T, typename As = T>  // As: the type the values are rounded to first (src.to(As))
struct TensorValues {
  static constexpr int kParts = 1;
  const T* src;
  int64_t cols;
  __device__ __forceinline__ void load(int64_t r, int64_t c, float (&v)[1][16]) const {
    load8(src + r * cols + c, v[0]);
    load8(src + r * cols + c + 8, v[0] + 8);
    if constexpr (!std::is_same_v<T, As>) {
#pragma unroll
      for (int i = 0; i < 16; ++i) v[0][i] = round_to<As>(v[0][i]);
    }
  }
};

template <typename T>
struct SwigluValues {  // silu(g) * u of gu = [g | u], [rows, 2 ffn]: [rows, ffn]
  static constexpr int kParts = 1;
  const T* gu;
  int64_t ffn;
  __device__ __forceinline__ void load(int64_t r, int64_t c, float (&v)[1][16]) const {
    float g[16], u[16];
    const T* row = gu + r * 2 * ffn;
    load8(row + c, g), load8(row + c + 8, g + 8);
    load8(row + ffn + c, u), load8(row + ffn + c + 8, u + 8);
#pragma unroll
    for (int i = 0; i < 16; ++i) v[0][i] = round_to<T>(swiglu_value(g[i], u[i]));
  }
};

template <typename T>
struct SwigluGradValues {  // d gu for the output gradient dout [rows, ffn]: [rows, 2 ffn]
  static constexpr int kParts = 2;
  const T* gu;
  const T* dout;
  int64_t ffn;
  __device__ __forceinline__ void load(int64_t r, int64_t c, float (&v)[2][16]) const {
    float g[16], u[16], d[16];
    const T* row = gu + r * 2 * ffn;
    load8(row + c, g), load8(row + c + 8, g + 8);
    load8(row + ffn + c, u), load8(row + ffn + c + 8, u + 8);
    load8(dout + r * ffn + c, d), load8(dout + r * ffn + c + 8, d + 8);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      float dg, du;
      swiglu_grads(g[i], u[i], d[i], dg, du);
      v[0][i] = round_to<T>(dg);
      v[1][i] = round_to<T>(du);
    }
  }
};

template <typename T>
struct RopeGradValues {  // rope_bwd_kernel's dqkv [batch * seq, (heads + 2 kv_heads) * head_dim]
  static constexpr int kParts = 1;
  const T *dq, *dk, *dv;
  Strides3 sq, sk, sv;
  const float *cos, *sin;
  int64_t seq, heads, kv_heads, head_dim;  // head_dim a multiple of 16: a thread's 16 columns are one head's
  __device__ __forceinline__ void load(int64_t r, int64_t c, float (&v)[1][16]) const {
    const int64_t b = r / seq, t = r - b * seq, half = head_dim / 2;
    const QkvSlot s = qkv_slot(c, heads, kv_heads, head_dim);
    const Strides3 st = s.part == 0 ? sq : s.part == 1 ? sk : sv;
    const T* src = (s.part == 0 ? dq : s.part == 1 ? dk : dv) + b * st.b + t * st.t + s.head * st.h + s.d;
    float g[16];
    loadv<8>(src, g);
    loadv<8>(src + 8, g + 8);
    if (s.part == 2) {
#pragma unroll
      for (int i = 0; i < 16; ++i) v[0][i] = g[i];
      return;
    }
    float o[16];
    rotate_pairs<16, true>(g, cos + t * half + s.d / 2, sin + t * half + s.d / 2, o);
#pragma unroll
    for (int i = 0; i < 16; ++i) v[0][i] = round_to<T>(o[i]);
  }
};

// One 64x64 tile of each part per block: the values scaled by the delayed scale, saturated to the
// format's finite range, written row-major to dst ([rows, kParts cols]) and through shared memory
// transposed to dst_t ([kParts cols, rows]); the block's amax raises *amax_current.
template <Fp8Kind K, typename Values>
__global__ void __launch_bounds__(256)
    fp8_cast_kernel(const Values values, int64_t rows, int64_t cols, const float* __restrict__ amax_history,
                    float* __restrict__ amax_current, float* __restrict__ inv_scale, uint8_t* __restrict__ dst,
                    uint8_t* __restrict__ dst_t) {
  constexpr int P = Values::kParts;
  __shared__ Fp8Tile tile[P];
  __shared__ float red[32];
  const float scale = delayed_scale<K>(amax_history);
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) *inv_scale = 1.f / scale;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile, col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int tr = threadIdx.x / 4, tc = (threadIdx.x % 4) * 16;  // this thread's row and 16 columns
  const int64_t r = row0 + tr, c = col0 + tc;
  float amax = 0.f;
  if (r < rows && c < cols) {
    float v[P][16];
    values.load(r, c, v);
#pragma unroll
    for (int p = 0; p < P; ++p) {
      alignas(16) uint8_t q[16];
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        amax = fmaxf(amax, fabsf(v[p][i]));
        q[i] = __nv_cvt_float_to_fp8(v[p][i] * scale, __NV_SATFINITE, Fp8Traits<K>::kInterp);
        tile[p][tr][tc + i] = q[i];
      }
      if (dst) *reinterpret_cast<uint4*>(dst + r * P * cols + p * cols + c) = *reinterpret_cast<const uint4*>(q);
    }
  }
  if (dst_t) {
    __syncthreads();
#pragma unroll
    for (int p = 0; p < P; ++p) store_tile_transposed(tile[p], rows, cols, row0, col0, dst_t + p * cols * rows);
  }
  record_amax(amax, red, amax_current);
}

// RMSNorm whose output goes straight to float8: rms_norm_fwd_kernel's h, rstd and y, except that y
// is scaled by the delayed scale and written as e4m3 to dst ([rows, cols]) and, through shared
// memory, transposed to dst_t ([cols, rows]), as fp8_cast_kernel would cast it, instead of being
// stored as 16-bit for that kernel to read. A block normalises kNormFp8Rows rows with
// kNormFp8Rows / kRows groups of `row_threads` threads (rms_norm_fwd_kernel's block for one row),
// each group kRows of them: thread t of a group owns the same 8-element chunks of its rows as
// thread t of that kernel, and each row's sum of squares goes through the same warp and block tree,
// so rstd and the values are bit for bit that kernel's. A thread's rows are loaded together (in
// flight at once); the second pass reads h (or x) again from L1/L2. Dynamic shared memory:
// kNormFp8Rows x cols bytes (the float8 tile).
constexpr int kNormFp8Rows = 16;  // the transposed store writes 16 bytes (one row group) per column
constexpr int kNormFp8MaxCols = 8192;  // a 128 KB tile; with_chunks<4> of 256 threads
// Rows per thread: 4 (groups of up to 256 threads, 4 groups: up to 1024 threads) for rows of up to
// two chunks a thread; 8 (2 groups) above, where the chunks take more registers.
__host__ __device__ constexpr int norm_fp8_rows_per_thread(int chunks) { return chunks <= 2 ? 4 : 8; }

template <typename TX, typename TW, typename TY, int kChunks, bool kResidual>
__global__ void __launch_bounds__(kNormFp8Rows / norm_fp8_rows_per_thread(kChunks) * 256)
    rms_norm_fp8_kernel(const TX* __restrict__ x, const TY* __restrict__ r, const TW* __restrict__ w,
                        TX* __restrict__ h, float* __restrict__ rstd, int64_t rows, int cols, int row_threads,
                        float eps, const float* __restrict__ amax_history, float* __restrict__ amax_current,
                        float* __restrict__ inv_scale, uint8_t* __restrict__ dst, uint8_t* __restrict__ dst_t) {
  constexpr int R = kNormFp8Rows, kRows = norm_fp8_rows_per_thread(kChunks);
  extern __shared__ __align__(16) uint8_t tile[];  // [R][cols], stored 8 bytes at a time
  __shared__ float red[R][8];        // each row's warp sums (up to 8 warps a group)
  const float scale = delayed_scale<Fp8Kind::E4M3>(amax_history);
  if (blockIdx.x == 0 && threadIdx.x == 0) *inv_scale = 1.f / scale;
  const int group = threadIdx.x / row_threads, t = threadIdx.x - group * row_threads;
  const int k0 = group * kRows;  // this group's first row in the block
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * R;
  const TX* src = kResidual ? h : x;  // what the second pass reads: h = x + r, or x itself
  // Pass 1: each row's sum of squares as rms_norm_fwd_kernel forms it (and h written).
  float ss[kRows];
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    const int64_t base = (row0 + k0 + j) * cols;
    ss[j] = 0.f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * row_threads + t) * kVec;
      if (col >= cols) continue;
      float v[kVec];
      load8(x + base + col, v);
      if constexpr (kResidual) {
        float rv[kVec];
        load8(r + base + col, rv);
#pragma unroll
        for (int i = 0; i < kVec; ++i) v[i] = round_to<TX>(v[i] + rv[i]);
        store8(h + base + col, v);
      }
#pragma unroll
      for (int i = 0; i < kVec; ++i) ss[j] += v[i] * v[i];
    }
  }
  // block_sum's tree, per row: the warp's sum, then the group's warps' sums.
  const int lane = t & 31, warp = t >> 5, warps = (row_threads + 31) >> 5;
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    const float s = warp_sum(ss[j]);
    if (lane == 0) red[k0 + j][warp] = s;
  }
  float wv[kChunks][kVec];  // the same weights for every row
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = (c * row_threads + t) * kVec;
    if (col < cols) load8(w + col, wv[c]);
  }
  __syncthreads();
  float amax = 0.f;
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    const int k = k0 + j;
    const float rs = rsqrtf(warp_sum(lane < warps ? red[k][lane] : 0.f) / static_cast<float>(cols) + eps);
    const int64_t base = (row0 + k) * cols;
    if (t == 0) rstd[row0 + k] = rs;
    // Pass 2: y as rms_norm_fwd_kernel stores it (rounded to TY), then scaled to float8.
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * row_threads + t) * kVec;
      if (col >= cols) continue;
      float v[kVec];
      load8(src + base + col, v);
      alignas(8) uint8_t q[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float y = round_to<TY>(round_to<TX>(v[i] * rs) * wv[c][i]);
        amax = fmaxf(amax, fabsf(y));
        q[i] = __nv_cvt_float_to_fp8(y * scale, __NV_SATFINITE, __NV_E4M3);
      }
      *reinterpret_cast<uint2*>(dst + base + col) = *reinterpret_cast<const uint2*>(q);
      *reinterpret_cast<uint2*>(tile + k * cols + col) = *reinterpret_cast<const uint2*>(q);
    }
  }
  __syncthreads();
  // Transposed: each column's R bytes, one 16-byte store.
  for (int col = threadIdx.x; col < cols; col += blockDim.x) {
    alignas(16) uint8_t q[R];
#pragma unroll
    for (int k = 0; k < R; ++k) q[k] = tile[k * cols + col];
    *reinterpret_cast<uint4*>(dst_t + static_cast<int64_t>(col) * rows + row0) = *reinterpret_cast<const uint4*>(q);
  }
  __shared__ float red_max[32];
  record_amax(amax, red_max, amax_current);
}

template <typename T>
__global__ void fp8_amax_kernel(const T* __restrict__ src, int64_t chunks, float* __restrict__ amax_out) {
  __shared__ float red[32];
  float amax = 0.f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v[kVec];
    load8(src + i * kVec, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) amax = fmaxf(amax, fabsf(v[k]));
  }
  amax = block_max(amax, red);
  if (threadIdx.x == 0 && amax > 0.f) atomic_max_nonneg(amax_out, amax);
}

template <typename TX, typename TY>
__global__ void residual_add_kernel(const TX* __restrict__ h, const TY* __restrict__ y, TX* __restrict__ out,
                                    int64_t chunks) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < chunks;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float a[kVec], b[kVec];
    load8(h + i * kVec, a);
    load8(y + i * kVec, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] += b[k];
    store8(out + i * kVec, a);
  }
}

__global__ void fp8_roll_kernel(float* history, float* current, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    history[i] = current[i];
    current[i] = 0.f;
  }
}

__global__ void scale_kernel(float* __restrict__ x, int64_t n, const float* __restrict__ s) {
  const float k = *s;
  if (k == 1.f) return;  // x * 1 == x for every float: nothing to write
  const int64_t n4 = n / 4, stride = int64_t{gridDim.x} * blockDim.x;
  auto* __restrict__ x4 = reinterpret_cast<float4*>(x);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n4; i += stride) {
    float4 v = x4[i];
    v.x *= k, v.y *= k, v.z *= k, v.w *= k;
    x4[i] = v;
  }
  for (int64_t i = 4 * n4 + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) x[i] *= k;
}

// ============================================================================================
// Dispatch helpers
// ============================================================================================

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls f(T{}) with the C++ type of `t` and returns what it returns (a launcher's bool, or nothing).
template <typename F>
auto with_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::F32:
      return f(float{});
    case ElemType::BF16:
      return f(__nv_bfloat16{});
    case ElemType::F16:
      return f(__half{});
  }
  return decltype(f(float{}))();
}

int grid_for(int64_t chunks, int threads) {
  const int64_t blocks = (chunks + threads - 1) / threads;
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 65535 * 8));
}

// Threads per row-block and 8-element chunks per thread for a row of `cols`.
void row_geometry(int64_t cols, int* threads, int* chunks) {
  const int64_t vecs = cols / kVec;
  *threads = static_cast<int>(std::min<int64_t>(256, ((vecs + 31) / 32) * 32));
  *chunks = static_cast<int>((vecs + *threads - 1) / *threads);
}

// The (x, w, y) type combinations of the precision modes: autocast (fp32 x and w, 16-bit y),
// 16-bit everything (pure bf16, FSDP's gathered bf16/fp16 parameters), fp32 everything.
// f(x, w, y) for one of them; returns what f returns when that is a bool (whether it launched:
// with_chunks may find no width), true when f returns nothing, false for any other combination.
template <typename F>
bool with_norm_types(ElemType tx, ElemType tw, ElemType ty, F&& f) {
  using E = ElemType;
  const auto call = [&](auto X, auto W, auto Y) -> bool {
    if constexpr (std::is_void_v<decltype(f(X, W, Y))>) {
      f(X, W, Y);
      return true;
    } else {
      return f(X, W, Y);
    }
  };
  if (tx == E::F32 && tw == E::F32 && ty == E::BF16) return call(float{}, float{}, __nv_bfloat16{});
  if (tx == E::F32 && tw == E::F32 && ty == E::F16) return call(float{}, float{}, __half{});
  if (tx == E::F32 && tw == E::F32 && ty == E::F32) return call(float{}, float{}, float{});
  if (tx == E::BF16 && tw == E::BF16 && ty == E::BF16) return call(__nv_bfloat16{}, __nv_bfloat16{}, __nv_bfloat16{});
  if (tx == E::F16 && tw == E::F16 && ty == E::F16) return call(__half{}, __half{}, __half{});
  return false;
}

template <int N, typename F>
bool with_chunks(int chunks, F&& f) {
  if constexpr (N == 0) {
    return false;
  } else {
    if (chunks == N) return f(std::integral_constant<int, N>{}), true;
    return with_chunks<N - 1>(chunks, f);
  }
}

// ============================================================================================
// AdamW over many tensors
// ============================================================================================

constexpr int kAdamwMaxTensors = 64;           // per launch: the table below stays a small kernel argument
constexpr int64_t kAdamwChunk = int64_t{1} << 16;  // elements per block
constexpr int kAdamwThreads = 256;

// The four fp32 streams of AdamW (parameter, gradient, first and second moment) of up to N
// tensors, as a kernel argument.
template <int N>
struct AdamwStreams {
  float* p[N];
  const float* g[N];
  float* m[N];
  float* v[N];
  void set(int k, float* param, const float* grad, float* exp_avg, float* exp_avg_sq) {
    p[k] = param;
    g[k] = grad;
    m[k] = exp_avg;
    v[k] = exp_avg_sq;
  }
};

// AdamwTensor::grad_bf16: t.g[i] then holds bf16 values (stored in the fp32 pointer slot).
struct AdamwTable : AdamwStreams<kAdamwMaxTensors> {
  bool g_bf16[kAdamwMaxTensors];
  void* c[kAdamwMaxTensors];  // the updated parameter in 16 bits, or null
  int64_t n[kAdamwMaxTensors];
  int64_t first_chunk[kAdamwMaxTensors + 1];  // block b works on tensor i where first_chunk[i] <= b < first_chunk[i+1]
  int count;
};

struct AdamwScalars {
  float lr, beta1, beta2, weight_decay, eps;
};

__device__ __forceinline__ void adamw_one(float& p, float g, float& m, float& v, const AdamwScalars& s, float step_size,
                                          float bc2_sqrt) {
  p -= s.lr * s.weight_decay * p;
  m = s.beta1 * m + (1.f - s.beta1) * g;
  v = s.beta2 * v + (1.f - s.beta2) * g * g;
  const float denom = sqrtf(v) / bc2_sqrt + s.eps;
  p -= step_size * m / denom;
}

// The tensor of a multi-tensor launch this block works on: the last i whose first block
// first[i] <= blockIdx.x (one thread searches; every thread returns it).
__device__ __forceinline__ int block_tensor(const int64_t* first, int count) {
  __shared__ int tensor;
  if (threadIdx.x == 0) {
    int lo = 0, hi = count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (first[mid] <= static_cast<int64_t>(blockIdx.x)) lo = mid;
      else hi = mid - 1;
    }
    tensor = lo;
  }
  __syncthreads();
  return tensor;
}

// The step's bias corrections (t = *step, a device float): lr / (1 - b1^t) and sqrt(1 - b2^t).
struct AdamwBias {
  float step_size, bc2_sqrt;
};
__device__ __forceinline__ AdamwBias adamw_bias(const AdamwScalars& s, const float* step) {
  const float st = *step;
  const float bc1 = 1.f - powf(s.beta1, st);
  return {s.lr / bc1, sqrtf(1.f - powf(s.beta2, st))};
}

// Four gradients from element e on: fp32 (one 16-byte access) or bf16 (one 8-byte access).
__device__ __forceinline__ float4 grad4(const float* g, bool bf16, int64_t e) {
  if (!bf16) return *reinterpret_cast<const float4*>(g + e);
  float v[4];
  loadv<4>(reinterpret_cast<const __nv_bfloat16*>(g) + e, v);
  return make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ float grad1(const float* g, bool bf16, int64_t e) {
  return bf16 ? to_f(reinterpret_cast<const __nv_bfloat16*>(g)[e]) : g[e];
}

// TC: the copies' element type (float when no tensor of the launch has one; never written then).
template <typename TC>
__global__ void __launch_bounds__(kAdamwThreads)
    adamw_kernel(const __grid_constant__ AdamwTable t, AdamwScalars s, const float* __restrict__ step) {
  const int i = block_tensor(t.first_chunk, t.count);
  const auto [step_size, bc2_sqrt] = adamw_bias(s, step);
  const int64_t begin = (static_cast<int64_t>(blockIdx.x) - t.first_chunk[i]) * kAdamwChunk;
  const int64_t end = min(begin + kAdamwChunk, t.n[i]);
  float* __restrict__ p = t.p[i];
  const float* __restrict__ g = t.g[i];
  float* __restrict__ m = t.m[i];
  float* __restrict__ v = t.v[i];
  TC* __restrict__ c = static_cast<TC*>(t.c[i]);
  const bool gh = t.g_bf16[i];
  const bool vec = (reinterpret_cast<uintptr_t>(p) | reinterpret_cast<uintptr_t>(m) | reinterpret_cast<uintptr_t>(v)) %
                           16 ==
                       0 &&
                   reinterpret_cast<uintptr_t>(g) % (gh ? 8 : 16) == 0 &&
                   reinterpret_cast<uintptr_t>(c) % (4 * sizeof(TC)) == 0 && t.n[i] % 4 == 0;
  if (vec) {
    for (int64_t e = begin + 4 * threadIdx.x; e < end; e += 4 * kAdamwThreads) {
      float4 pv = *reinterpret_cast<const float4*>(p + e);
      const float4 gv = grad4(g, gh, e);
      float4 mv = *reinterpret_cast<const float4*>(m + e);
      float4 vv = *reinterpret_cast<const float4*>(v + e);
      adamw_one(pv.x, gv.x, mv.x, vv.x, s, step_size, bc2_sqrt);
      adamw_one(pv.y, gv.y, mv.y, vv.y, s, step_size, bc2_sqrt);
      adamw_one(pv.z, gv.z, mv.z, vv.z, s, step_size, bc2_sqrt);
      adamw_one(pv.w, gv.w, mv.w, vv.w, s, step_size, bc2_sqrt);
      *reinterpret_cast<float4*>(p + e) = pv;
      *reinterpret_cast<float4*>(m + e) = mv;
      *reinterpret_cast<float4*>(v + e) = vv;
      if (c) {
        const float out[4] = {pv.x, pv.y, pv.z, pv.w};
        storev<4>(c + e, out);
      }
    }
  } else {
    for (int64_t e = begin + threadIdx.x; e < end; e += kAdamwThreads) {
      float pv = p[e], mv = m[e], vv = v[e];
      adamw_one(pv, grad1(g, gh, e), mv, vv, s, step_size, bc2_sqrt);
      p[e] = pv;
      m[e] = mv;
      v[e] = vv;
      if (c) c[e] = from_f<TC>(pv);
    }
  }
}

constexpr int kAdamwFp8MaxTensors = 24;

struct AdamwFp8Table : AdamwStreams<kAdamwFp8MaxTensors> {
  uint8_t* q[kAdamwFp8MaxTensors];
  uint8_t* qt[kAdamwFp8MaxTensors];
  const float* hist[kAdamwFp8MaxTensors];
  float* cur[kAdamwFp8MaxTensors];
  float* inv[kAdamwFp8MaxTensors];
  int64_t rows[kAdamwFp8MaxTensors], cols[kAdamwFp8MaxTensors];
  int64_t first_tile[kAdamwFp8MaxTensors + 1];  // block b works on tensor i where first_tile[i] <= b < first_tile[i+1]
  int count;
};

// One 64x64 tile per block. Reading and writing p, g, m and v, 16 threads cover a tile row of 64
// floats with 16-byte accesses, so a warp's accesses are two whole rows; each thread does 4 rows.
// The e4m3 bytes go to shared memory, from which the transposed copy is written 16 bytes a thread.
__global__ void __launch_bounds__(256)
    adamw_fp8_kernel(const __grid_constant__ AdamwFp8Table t, AdamwScalars s, const float* __restrict__ step) {
  __shared__ Fp8Tile tile;
  __shared__ float red[32];
  const int i = block_tensor(t.first_tile, t.count);
  const auto [step_size, bc2_sqrt] = adamw_bias(s, step);
  const int64_t rows = t.rows[i], cols = t.cols[i];
  const int64_t tiles_x = (cols + kTile - 1) / kTile;
  const int64_t local = static_cast<int64_t>(blockIdx.x) - t.first_tile[i];
  const int64_t row0 = local / tiles_x * kTile, col0 = local % tiles_x * kTile;
  const float scale = delayed_scale<Fp8Kind::E4M3>(t.hist[i]);
  if (local == 0 && threadIdx.x == 0) *t.inv[i] = 1.f / scale;
  const int tc = (threadIdx.x % 16) * 4;  // this thread's 4 columns of the tile
  const int64_t c = col0 + tc;            // cols is a multiple of 16: c < cols covers c + 3
  float amax = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int tr = static_cast<int>(threadIdx.x / 16) + 16 * k;
    const int64_t r = row0 + tr;
    if (r < rows && c < cols) {
      const int64_t e = r * cols + c;
      float4 pv = *reinterpret_cast<const float4*>(t.p[i] + e);
      const float4 gv = *reinterpret_cast<const float4*>(t.g[i] + e);
      float4 mv = *reinterpret_cast<const float4*>(t.m[i] + e);
      float4 vv = *reinterpret_cast<const float4*>(t.v[i] + e);
      adamw_one(pv.x, gv.x, mv.x, vv.x, s, step_size, bc2_sqrt);
      adamw_one(pv.y, gv.y, mv.y, vv.y, s, step_size, bc2_sqrt);
      adamw_one(pv.z, gv.z, mv.z, vv.z, s, step_size, bc2_sqrt);
      adamw_one(pv.w, gv.w, mv.w, vv.w, s, step_size, bc2_sqrt);
      *reinterpret_cast<float4*>(t.p[i] + e) = pv;
      *reinterpret_cast<float4*>(t.m[i] + e) = mv;
      *reinterpret_cast<float4*>(t.v[i] + e) = vv;
      const float out[4] = {pv.x, pv.y, pv.z, pv.w};
      alignas(4) uint8_t q[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        amax = fmaxf(amax, fabsf(out[j]));
        q[j] = __nv_cvt_float_to_fp8(out[j] * scale, __NV_SATFINITE, __NV_E4M3);
        tile[tr][tc + j] = q[j];
      }
      *reinterpret_cast<uint32_t*>(t.q[i] + e) = *reinterpret_cast<const uint32_t*>(q);
    }
  }
  __syncthreads();
  store_tile_transposed(tile, rows, cols, row0, col0, t.qt[i]);
  record_amax(amax, red, t.cur[i]);
}

// The widest vector (8, 4 or 2 elements) that divides every given extent and keeps every pointer
// aligned to it; 0 when none (an odd extent).
template <typename T>
int rope_vector(std::initializer_list<int64_t> extents, std::initializer_list<const void*> pointers) {
  for (int v : {8, 4, 2}) {
    bool ok = true;
    for (int64_t n : extents) ok = ok && n % v == 0;
    const uintptr_t bytes = static_cast<uintptr_t>(std::min<size_t>(16, sizeof(T) * v));
    for (const void* p : pointers) ok = ok && (p == nullptr || reinterpret_cast<uintptr_t>(p) % bytes == 0);
    if (ok) return v;
  }
  return 0;
}

}  // namespace

// ============================================================================================
// Launchers
// ============================================================================================

bool rms_norm_forward(ElemType tx, ElemType tw, ElemType ty, const void* x, const void* r, const void* w, void* h,
                      void* y, float* rstd, int64_t rows, int64_t cols, float eps, cudaStream_t stream) {
  if (cols % kVec != 0 || rows <= 0 || rows > INT32_MAX || !aligned16(x) || !aligned16(r) || !aligned16(w) ||
      !aligned16(h) || !aligned16(y) || (r && !h))
    return false;
  int threads, chunks;
  row_geometry(cols, &threads, &chunks);
  return with_norm_types(tx, tw, ty, [&](auto X, auto W, auto Y) {
    using TX = decltype(X);
    using TW = decltype(W);
    using TY = decltype(Y);
    return with_chunks<4>(chunks, [&](auto C) {
      const dim3 grid(static_cast<unsigned>(rows));
      if (r)
        rms_norm_fwd_kernel<TX, TW, TY, C.value, true><<<grid, threads, 0, stream>>>(
            static_cast<const TX*>(x), static_cast<const TY*>(r), static_cast<const TW*>(w), static_cast<TX*>(h),
            static_cast<TY*>(y), rstd, static_cast<int>(cols), eps);
      else
        rms_norm_fwd_kernel<TX, TW, TY, C.value, false>
            <<<grid, threads, 0, stream>>>(static_cast<const TX*>(x), nullptr, static_cast<const TW*>(w), nullptr,
                                           static_cast<TY*>(y), rstd, static_cast<int>(cols), eps);
    });
  });
}

int rms_norm_backward_blocks(int64_t rows, int sm_count) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(rows, 2 * static_cast<int64_t>(sm_count))));
}

bool rms_norm_backward(ElemType tx, ElemType tw, ElemType ty, const void* h, const void* w, const void* dy,
                       const void* dh, const float* rstd, void* dx, void* dr, float* dw_partial, int blocks,
                       int64_t rows, int64_t cols, cudaStream_t stream, bool dh_added) {
  if (cols % kVec != 0 || rows <= 0 || blocks <= 0 || !aligned16(h) || !aligned16(w) || !aligned16(dy) ||
      !aligned16(dh) || !aligned16(dx) || !aligned16(dr) || !aligned16(dw_partial))
    return false;
  int threads, chunks;
  row_geometry(cols, &threads, &chunks);
  return with_norm_types(tx, tw, ty, [&](auto X, auto W, auto Y) {
    using TX = decltype(X);
    using TW = decltype(W);
    using TY = decltype(Y);
    return with_chunks<4>(chunks, [&](auto C) {
      const auto launch = [&](auto kernel) {
        kernel<<<blocks, threads, 0, stream>>>(static_cast<const TX*>(h), static_cast<const TW*>(w),
                                               static_cast<const TY*>(dy), static_cast<const TX*>(dh), rstd,
                                               static_cast<TX*>(dx), static_cast<TY*>(dr), dw_partial, rows,
                                               static_cast<int>(cols));
      };
      if (dh && dr)
        launch(rms_norm_bwd_kernel<TX, TW, TY, C.value, kDhFused, true>);
      else if (dh && dh_added)
        launch(rms_norm_bwd_kernel<TX, TW, TY, C.value, kDhAdded, false>);
      else if (dh)
        launch(rms_norm_bwd_kernel<TX, TW, TY, C.value, kDhFused, false>);
      else if (dr)
        launch(rms_norm_bwd_kernel<TX, TW, TY, C.value, kNoDh, true>);
      else
        launch(rms_norm_bwd_kernel<TX, TW, TY, C.value, kNoDh, false>);
    });
  });
}

bool rope_qkv_forward(ElemType t, const void* qkv, const float* cos, const float* sin, void* q, void* k, void* v,
                      int64_t batch, int64_t seq, int64_t heads, int64_t kv_heads, int64_t head_dim,
                      int64_t padded_head_dim, cudaStream_t stream) {
  const int64_t hdp = std::max(padded_head_dim, head_dim);
  if (head_dim <= 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) return false;
  const int64_t chunks_all = batch * seq * (heads + 2 * kv_heads) * head_dim;
  if (chunks_all == 0) return true;
  bool launched = false;
  with_type(t, [&](auto T0) {
    using T = decltype(T0);
    const int vec = rope_vector<T>({head_dim, hdp}, {qkv, q, k, v});
    const auto launch = [&](auto kernel, int width) {
      const int64_t chunks = chunks_all / width;
      kernel<<<grid_for(chunks, 256), 256, 0, stream>>>(static_cast<const T*>(qkv), cos, sin, static_cast<T*>(q),
                                                        static_cast<T*>(k), static_cast<T*>(v), chunks, seq, heads,
                                                        kv_heads, head_dim, hdp);
      launched = true;
    };
    if (vec == 8) launch(rope_fwd_kernel<T, 8>, 8);
    else if (vec == 4) launch(rope_fwd_kernel<T, 4>, 4);
    else if (vec == 2) launch(rope_fwd_kernel<T, 2>, 2);
  });
  return launched;
}

bool rope_qkv_backward(ElemType t, const void* dq, Strides3 sq, const void* dk, Strides3 sk, const void* dv,
                       Strides3 sv, const float* cos, const float* sin, void* dqkv, int64_t batch, int64_t seq,
                       int64_t heads, int64_t kv_heads, int64_t head_dim, cudaStream_t stream) {
  if (head_dim <= 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) return false;
  const int64_t all = batch * seq * (heads + 2 * kv_heads) * head_dim;
  if (all == 0) return true;
  bool launched = false;
  with_type(t, [&](auto T0) {
    using T = decltype(T0);
    const int vec = rope_vector<T>({head_dim, sq.b, sq.t, sq.h, sk.b, sk.t, sk.h, sv.b, sv.t, sv.h}, {dq, dk, dv, dqkv});
    const auto launch = [&](auto kernel, int width) {
      const int64_t chunks = all / width;
      kernel<<<grid_for(chunks, 256), 256, 0, stream>>>(static_cast<const T*>(dq), sq, static_cast<const T*>(dk), sk,
                                                        static_cast<const T*>(dv), sv, cos, sin, static_cast<T*>(dqkv),
                                                        chunks, seq, heads, kv_heads, head_dim);
      launched = true;
    };
    if (vec == 8) launch(rope_bwd_kernel<T, 8>, 8);
    else if (vec == 4) launch(rope_bwd_kernel<T, 4>, 4);
    else if (vec == 2) launch(rope_bwd_kernel<T, 2>, 2);
  });
  return launched;
}

bool residual_add(ElemType tx, ElemType ty, const void* h, const void* y, void* out, int64_t n, cudaStream_t stream) {
  if (n < 0 || n % kVec != 0 || !aligned16(h) || !aligned16(y) || !aligned16(out)) return false;
  // The norms' (x, w, y) pairs with w = x: fp32 with fp32/bf16/fp16, or a 16-bit type with itself.
  return with_norm_types(tx, tx, ty, [&](auto X, auto, auto Y) {
    using TX = decltype(X);
    using TY = decltype(Y);
    const int64_t chunks = n / kVec;
    if (chunks > 0)
      residual_add_kernel<TX, TY><<<grid_for(chunks, 256), 256, 0, stream>>>(
          static_cast<const TX*>(h), static_cast<const TY*>(y), static_cast<TX*>(out), chunks);
  });
}

bool swiglu_forward(ElemType t, const void* gu, void* out, int64_t rows, int64_t ffn, cudaStream_t stream) {
  if (ffn % kVec != 0 || !aligned16(gu) || !aligned16(out)) return false;
  const int64_t chunks = rows * ffn / kVec;
  if (chunks == 0) return true;
  with_type(t, [&](auto T0) {
    using T = decltype(T0);
    swiglu_fwd_kernel<T>
        <<<grid_for(chunks, 256), 256, 0, stream>>>(static_cast<const T*>(gu), static_cast<T*>(out), chunks, ffn);
  });
  return true;
}

bool swiglu_backward(ElemType t, const void* gu, const void* dout, void* dgu, int64_t rows, int64_t ffn,
                     cudaStream_t stream) {
  if (ffn % kVec != 0 || !aligned16(gu) || !aligned16(dout) || !aligned16(dgu)) return false;
  const int64_t chunks = rows * ffn / kVec;
  if (chunks == 0) return true;
  with_type(t, [&](auto T0) {
    using T = decltype(T0);
    swiglu_bwd_kernel<T><<<grid_for(chunks, 256), 256, 0, stream>>>(
        static_cast<const T*>(gu), static_cast<const T*>(dout), static_cast<T*>(dgu), chunks, ffn);
  });
  return true;
}

bool cross_entropy_forward_backward(ElemType t, void* logits, const int64_t* targets, float* loss_rows, int64_t rows,
                                    int64_t vocab, float grad_scale, cudaStream_t stream) {
  if (rows <= 0 || rows > INT32_MAX) return false;
  // Rows of a vocabulary that is no multiple of 8 (GPT-2's 50257) are not 16-byte aligned: one
  // element per access there.
  const bool wide = vocab % kVec == 0 && aligned16(logits);
  with_type(t, [&](auto T0) {
    using T = decltype(T0);
    if (wide)
      cross_entropy_kernel<T, kVec><<<static_cast<unsigned>(rows), 512, 0, stream>>>(static_cast<T*>(logits), targets,
                                                                                   loss_rows, vocab, grad_scale);
    else
      cross_entropy_kernel<T, 1><<<static_cast<unsigned>(rows), 512, 0, stream>>>(static_cast<T*>(logits), targets,
                                                                                loss_rows, vocab, grad_scale);
  });
  return true;
}

// Launches fp8_cast_kernel in format K over a [rows, cols]-per-part source (false: sizes or
// alignment it does not take).
template <Fp8Kind K, typename Values>
bool launch_fp8_cast(const Values& values, int64_t rows, int64_t cols, const float* amax_history, float* amax_current,
                     float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  if (rows % 16 != 0 || cols % 16 != 0 || rows <= 0 || cols <= 0 || !aligned16(dst) || !aligned16(dst_t))
    return false;
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  if (grid.y > 65535) return false;
  fp8_cast_kernel<K><<<grid, 256, 0, stream>>>(values, rows, cols, amax_history, amax_current, inv_scale,
                                               static_cast<uint8_t*>(dst), static_cast<uint8_t*>(dst_t));
  return true;
}

// The same for a format chosen at run time (fp8_cast's callers cast activations and gradients).
template <typename Values>
bool launch_fp8_cast(const Values& values, Fp8Kind kind, int64_t rows, int64_t cols, const float* amax_history,
                     float* amax_current, float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  return kind == Fp8Kind::E4M3 ? launch_fp8_cast<Fp8Kind::E4M3>(values, rows, cols, amax_history, amax_current,
                                                               inv_scale, dst, dst_t, stream)
                               : launch_fp8_cast<Fp8Kind::E5M2>(values, rows, cols, amax_history, amax_current,
                                                               inv_scale, dst, dst_t, stream);
}

bool fp8_cast(ElemType ts, Fp8Kind kind, const void* src, int64_t rows, int64_t cols, const float* amax_history,
              float* amax_current, float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  if (!aligned16(src)) return false;
  return with_type(ts, [&](auto T0) {
    using T = decltype(T0);
    return launch_fp8_cast(TensorValues<T>{static_cast<const T*>(src), cols}, kind, rows, cols, amax_history,
                           amax_current, inv_scale, dst, dst_t, stream);
  });
}

bool fp8_cast_f32_as(ElemType as, Fp8Kind kind, const float* src, int64_t rows, int64_t cols,
                     const float* amax_history, float* amax_current, float* inv_scale, void* dst, void* dst_t,
                     cudaStream_t stream) {
  if (!aligned16(src) || as == ElemType::F32) return false;
  if (as == ElemType::BF16)
    return launch_fp8_cast(TensorValues<float, __nv_bfloat16>{src, cols}, kind, rows, cols, amax_history,
                           amax_current, inv_scale, dst, dst_t, stream);
  return launch_fp8_cast(TensorValues<float, __half>{src, cols}, kind, rows, cols, amax_history, amax_current,
                         inv_scale, dst, dst_t, stream);
}

bool rope_qkv_backward_fp8(ElemType t, const void* dq, Strides3 sq, const void* dk, Strides3 sk, const void* dv,
                           Strides3 sv, const float* cos, const float* sin, int64_t batch, int64_t seq, int64_t heads,
                           int64_t kv_heads, int64_t head_dim, const float* amax_history, float* amax_current,
                           float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  if (head_dim % 16 != 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0 || t == ElemType::F32) return false;
  for (const Strides3& st : {sq, sk, sv})
    if (st.b % 8 != 0 || st.t % 8 != 0 || st.h % 8 != 0) return false;
  if (!aligned16(dq) || !aligned16(dk) || !aligned16(dv)) return false;
  return with_type(t, [&](auto T0) {
    using T = decltype(T0);
    const RopeGradValues<T> values{static_cast<const T*>(dq), static_cast<const T*>(dk), static_cast<const T*>(dv),
                                   sq, sk, sv, cos, sin, seq, heads, kv_heads, head_dim};
    return launch_fp8_cast<Fp8Kind::E5M2>(values, batch * seq, (heads + 2 * kv_heads) * head_dim, amax_history,
                                          amax_current, inv_scale, dst, dst_t, stream);
  });
}

bool swiglu_fp8(ElemType t, const void* gu, int64_t rows, int64_t ffn, const float* amax_history, float* amax_current,
                float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  if (!aligned16(gu)) return false;
  return with_type(t, [&](auto T0) {
    using T = decltype(T0);
    return launch_fp8_cast<Fp8Kind::E4M3>(SwigluValues<T>{static_cast<const T*>(gu), ffn}, rows, ffn, amax_history,
                                          amax_current, inv_scale, dst, dst_t, stream);
  });
}

bool rms_norm_fp8_takes(int64_t rows, int64_t cols) {
  return cols > 0 && cols % 16 == 0 && cols <= kNormFp8MaxCols && rows > 0 && rows % kNormFp8Rows == 0 &&
         rows / kNormFp8Rows <= INT32_MAX;
}

bool rms_norm_fp8(ElemType tx, ElemType tw, ElemType ty, const void* x, const void* r, const void* w, void* h,
                  float* rstd, int64_t rows, int64_t cols, float eps, const float* amax_history, float* amax_current,
                  float* inv_scale, void* dst, void* dst_t, cudaStream_t stream) {
  constexpr int R = kNormFp8Rows;
  if (!rms_norm_fp8_takes(rows, cols) || !dst || !dst_t || !aligned16(x) || !aligned16(r) || !aligned16(w) ||
      !aligned16(h) || !aligned16(dst) || !aligned16(dst_t) || (r && !h))
    return false;
  int threads, chunks;
  row_geometry(cols, &threads, &chunks);
  const size_t smem = static_cast<size_t>(R) * static_cast<size_t>(cols);
  bool launched = false;  // also false where the launch itself is refused (shared memory)
  with_norm_types(tx, tw, ty, [&](auto X, auto W, auto Y) {
    using TX = decltype(X);
    using TW = decltype(W);
    using TY = decltype(Y);
    with_chunks<4>(chunks, [&](auto C) {
      const auto launch = [&](auto residual) {  // one instantiation, and so one `allowed`, per kernel
        const auto kernel = rms_norm_fp8_kernel<TX, TW, TY, C.value, decltype(residual)::value>;
        // The dynamic shared memory a launch may take: 48 KB less the static arrays, or up to the
        // device's opt-in limit once the kernel is allowed it (asked once per kernel; the worker
        // uses one device). A refusal is cleared, not left for the caller's launch check.
        static const size_t allowed = [&] {
          cudaFuncAttributes attributes{};
          int device = 0, optin = 0;
          if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess ||
              cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
            cudaGetLastError();
            return size_t{0};
          }
          const size_t fixed = attributes.sharedSizeBytes, base = 48 * 1024 > fixed ? 48 * 1024 - fixed : 0;
          const size_t most = static_cast<size_t>(optin) > fixed ? static_cast<size_t>(optin) - fixed : 0;
          if (most <= base) return base;
          if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)) !=
              cudaSuccess) {
            cudaGetLastError();
            return base;
          }
          return most;
        }();
        if (smem > allowed) return false;
        const int groups = R / norm_fp8_rows_per_thread(C.value);
        kernel<<<static_cast<unsigned>(rows / R), groups * threads, smem, stream>>>(
            static_cast<const TX*>(x), static_cast<const TY*>(r), static_cast<const TW*>(w), static_cast<TX*>(h),
            rstd, rows, static_cast<int>(cols), threads, eps, amax_history, amax_current, inv_scale,
            static_cast<uint8_t*>(dst), static_cast<uint8_t*>(dst_t));
        return true;
      };
      launched = r ? launch(std::true_type{}) : launch(std::false_type{});
    });
  });
  return launched;
}

bool swiglu_backward_fp8(ElemType t, const void* gu, const void* dout, int64_t rows, int64_t ffn,
                         const float* amax_history, float* amax_current, float* inv_scale, void* dst, void* dst_t,
                         cudaStream_t stream) {
  if (!aligned16(gu) || !aligned16(dout)) return false;
  return with_type(t, [&](auto T0) {
    using T = decltype(T0);
    return launch_fp8_cast<Fp8Kind::E5M2>(
        SwigluGradValues<T>{static_cast<const T*>(gu), static_cast<const T*>(dout), ffn}, rows, ffn, amax_history,
        amax_current, inv_scale, dst, dst_t, stream);
  });
}

bool fp8_amax(ElemType ts, const void* src, int64_t n, float* amax, cudaStream_t stream) {
  if (n % kVec != 0 || !aligned16(src)) return false;
  const int64_t chunks = n / kVec;
  if (chunks == 0) return true;
  with_type(ts, [&](auto T0) {
    using T = decltype(T0);
    fp8_amax_kernel<T>
        <<<std::min(grid_for(chunks, 256), 1024), 256, 0, stream>>>(static_cast<const T*>(src), chunks, amax);
  });
  return true;
}

bool scale_in_place(float* x, int64_t n, const float* s, cudaStream_t stream) {
  if (n < 0 || !x || !s || !aligned16(x)) return false;
  if (n > 0) scale_kernel<<<std::min(grid_for(n / 4 + 1, 256), 1024), 256, 0, stream>>>(x, n, s);
  return true;
}

void fp8_roll_history(float* history, float* current, int n, cudaStream_t stream) {
  if (n > 0) fp8_roll_kernel<<<(n + 255) / 256, 256, 0, stream>>>(history, current, n);
}

bool adamw_step(const AdamwTensor* tensors, int count, const float* step, float lr, float beta1, float beta2,
                float weight_decay, float eps, ElemType copy_type, cudaStream_t stream) {
  if (copy_type == ElemType::F32) {
    for (int i = 0; i < count; ++i)
      if (tensors[i].copy) return false;  // 16-bit copies only
  }
  const AdamwScalars s{lr, beta1, beta2, weight_decay, eps};
  for (int begin = 0; begin < count; begin += kAdamwMaxTensors) {
    AdamwTable t{};
    int64_t chunks = 0;
    t.count = 0;
    for (int i = begin; i < count && t.count < kAdamwMaxTensors; ++i) {
      if (tensors[i].numel <= 0) continue;
      const int k = t.count++;
      t.set(k, tensors[i].param, static_cast<const float*>(tensors[i].grad), tensors[i].exp_avg,
            tensors[i].exp_avg_sq);
      t.g_bf16[k] = tensors[i].grad_bf16;
      t.c[k] = tensors[i].copy;
      t.n[k] = tensors[i].numel;
      t.first_chunk[k] = chunks;
      chunks += (tensors[i].numel + kAdamwChunk - 1) / kAdamwChunk;
    }
    if (t.count == 0) continue;
    t.first_chunk[t.count] = chunks;
    if (chunks > INT32_MAX) return false;
    if (copy_type == ElemType::BF16)
      adamw_kernel<__nv_bfloat16><<<static_cast<unsigned>(chunks), kAdamwThreads, 0, stream>>>(t, s, step);
    else if (copy_type == ElemType::F16)
      adamw_kernel<__half><<<static_cast<unsigned>(chunks), kAdamwThreads, 0, stream>>>(t, s, step);
    else
      adamw_kernel<float><<<static_cast<unsigned>(chunks), kAdamwThreads, 0, stream>>>(t, s, step);
  }
  return true;
}

bool adamw_fp8_step(const AdamwFp8Tensor* tensors, int count, const float* step, float lr, float beta1, float beta2,
                    float weight_decay, float eps, cudaStream_t stream) {
  for (int i = 0; i < count; ++i) {
    const AdamwFp8Tensor& x = tensors[i];
    if (x.rows <= 0 || x.cols <= 0 || x.rows % 16 != 0 || x.cols % 16 != 0 || !x.fp8 || !x.fp8_t || !x.amax_history ||
        !x.amax_current || !x.inv_scale || !aligned16(x.param) || !aligned16(x.grad) || !aligned16(x.exp_avg) ||
        !aligned16(x.exp_avg_sq) || !aligned16(x.fp8) || !aligned16(x.fp8_t) ||
        (x.rows + kTile - 1) / kTile * ((x.cols + kTile - 1) / kTile) > INT32_MAX / kAdamwFp8MaxTensors)
      return false;  // checked for every tensor before any launch (a launch's grid then fits in 2^31 blocks)
  }
  const AdamwScalars s{lr, beta1, beta2, weight_decay, eps};
  for (int begin = 0; begin < count; begin += kAdamwFp8MaxTensors) {
    AdamwFp8Table t{};
    int64_t tiles = 0;
    for (int i = begin; i < count && t.count < kAdamwFp8MaxTensors; ++i) {
      const AdamwFp8Tensor& x = tensors[i];
      const int k = t.count++;
      t.set(k, x.param, x.grad, x.exp_avg, x.exp_avg_sq);
      t.q[k] = static_cast<uint8_t*>(x.fp8);
      t.qt[k] = static_cast<uint8_t*>(x.fp8_t);
      t.hist[k] = x.amax_history;
      t.cur[k] = x.amax_current;
      t.inv[k] = x.inv_scale;
      t.rows[k] = x.rows;
      t.cols[k] = x.cols;
      t.first_tile[k] = tiles;
      tiles += ((x.rows + kTile - 1) / kTile) * ((x.cols + kTile - 1) / kTile);
    }
    if (t.count == 0) continue;
    t.first_tile[t.count] = tiles;
    adamw_fp8_kernel<<<static_cast<unsigned>(tiles), 256, 0, stream>>>(t, s, step);
  }
  return true;
}

}  // namespace tunebench::kernels
