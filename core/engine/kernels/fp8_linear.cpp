// Float8 linear layer: the autograd Function around the float8 GEMMs (gemm::scaled_mm, at::_scaled_mm
// or its searched cuBLASLt plan) and the cast kernels.
#include "core/engine/kernels/fp8_linear.h"

#include <tuple>

#include <torch/csrc/autograd/custom_function.h>

#include "core/engine/compat.h"
#include "core/engine/errors.h"

#if defined(TUNEBENCH_WITH_CUDA) && TUNEBENCH_TORCH_AT_LEAST(2, 1)
#define TUNEBENCH_FP8 1
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "core/engine/kernels/fused_kernels.h"
#include "core/engine/kernels/fused_ops.h"
#include "core/engine/kernels/gemm_search.h"
#endif

namespace tunebench::engine {

enum Slot : int64_t { kX = 0, kW = 1, kDy = 2 };
// Each slot's scalars sit 16 bytes apart: cuBLASLt wants its scale pointers 16-byte aligned.
constexpr int64_t kSlotStride = 4;

Fp8Linear::Fp8Linear() = default;

void Fp8Linear::end_step() {
#ifdef TUNEBENCH_FP8
  if (!amax_history.defined()) return;
  kernels::fp8_roll_history(amax_history.data_ptr<float>(), amax_current.data_ptr<float>(), 3 * kSlotStride,
                            at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
}

#ifdef TUNEBENCH_FP8
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

kernels::ElemType elem(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return kernels::ElemType::F32;
    case at::kBFloat16:
      return kernels::ElemType::BF16;
    case at::kHalf:
      return kernels::ElemType::F16;
    default:
      throw unsupported("fp8 casts take fp32, bf16 or fp16 tensors");
  }
}
kernels::ElemType elem(const at::Tensor& t) { return elem(t.scalar_type()); }

// A [rows, cols] float8 tensor and its transpose, and a slot's scaling scalars, for a kernel that
// casts with the slot's delayed scale (fp8_cast, or one that casts what it computes).
struct Fp8Pair {
  at::Tensor q, qt;
  float *history, *current, *inv_scale;
};
Fp8Pair fp8_pair(Fp8Linear& s, Slot slot, int64_t rows, int64_t cols, kernels::Fp8Kind kind,
                 const at::TensorOptions& options) {
  const auto fp8 = options.dtype(kind == kernels::Fp8Kind::E4M3 ? at::kFloat8_e4m3fn : at::kFloat8_e5m2);
  const int64_t first = slot * kSlotStride;
  return {at::empty({rows, cols}, fp8), at::empty({cols, rows}, fp8), s.amax_history.data_ptr<float>() + first,
          s.amax_current.data_ptr<float>() + first, s.inv_scale.data_ptr<float>() + first};
}

// After such a kernel's launch (`ok`: it took the sizes): (q, q^T), or a clear error.
std::pair<at::Tensor, at::Tensor> launched(const Fp8Pair& p, bool ok) {
  if (!ok)
    throw unsupported("fp8 needs matrix sizes that are multiples of 16 (got " + std::to_string(p.q.size(0)) + "x" +
                      std::to_string(p.q.size(1)) + ")");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {p.q, p.qt};
}

// The same for a SwiGLU kernel that writes 16-bit values (the first step's, before any amax).
void swiglu_launched(bool ok) {
  if (!ok) throw unsupported("fp8 SwiGLU needs a feed-forward width that is a multiple of 16");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Casts a [rows, cols] tensor to float8 with the slot's delayed scale: (q, q^T).
std::pair<at::Tensor, at::Tensor> cast(Fp8Linear& s, Slot slot, const at::Tensor& src, kernels::Fp8Kind kind) {
  const Fp8Pair p = fp8_pair(s, slot, src.size(0), src.size(1), kind, src.options());
  return launched(p, kernels::fp8_cast(elem(src), kind, src.data_ptr(), src.size(0), src.size(1), p.history, p.current,
                                       p.inv_scale, p.q.data_ptr(), p.qt.data_ptr(), at::cuda::getCurrentCUDAStream()));
}

// The first use of a slot has no history: measure its amax once.
void measure(Fp8Linear& s, Slot slot, const at::Tensor& src) {
  if (!kernels::fp8_amax(elem(src), src.data_ptr(), src.numel(), s.amax_history.data_ptr<float>() + slot * kSlotStride,
                         at::cuda::getCurrentCUDAStream()))
    throw unsupported("fp8 amax needs a 16-byte aligned tensor whose size is a multiple of 8");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// An output gradient's e5m2 pair by the cast kernel (its amax measured on the slot's first use).
std::pair<at::Tensor, at::Tensor> gradient_fp8(Fp8Linear& s, const at::Tensor& dy2) {
  if (!s.measured_backward) measure(s, kDy, dy2);
  s.measured_backward = true;
  return cast(s, kDy, dy2, kernels::Fp8Kind::E5M2);
}

const at::Tensor& scale_of(const Fp8Linear& s, Slot slot) { return s.slot_scale[slot]; }

// The weight's float8 pair: the optimizer's copy handed over in `s.next_w8` (its scale already
// written), else cast here; the first use measures the amax first.
std::pair<at::Tensor, at::Tensor> weight_fp8(Fp8Linear& s, const at::Tensor& w) {
  at::Tensor w8 = std::move(s.next_w8), w8t = std::move(s.next_w8t);
  s.next_w8 = at::Tensor();
  s.next_w8t = at::Tensor();
  if (w8.defined()) return {w8, w8t};
  const at::Tensor wc = w.contiguous();
  if (!s.measured_forward) measure(s, kW, wc);
  return cast(s, kW, wc, kernels::Fp8Kind::E4M3);
}

// A linear's forward GEMM, y = x w^T in bf16 for x [M, K] (contiguous), and what its backward keeps:
// x^T and w^T in float8 (amax of x and w measured on first use).
struct Fp8Forward {
  at::Tensor y, x8t, w8t;
};
// The GEMM from x's float8 pair (x8 [M, K], x8t [K, M]).
Fp8Forward gemm_of(Fp8Linear& s, const std::pair<at::Tensor, at::Tensor>& x8, const at::Tensor& w) {
  const auto [w8, w8t] = weight_fp8(s, w);
  s.measured_forward = true;
  const at::Tensor y = gemm::scaled_mm(x8.first, w8.t(), scale_of(s, kX), scale_of(s, kW), at::kBFloat16,
                                       /*fast_accum=*/true);
  return {y, x8.second, w8t};
}
Fp8Forward forward_gemm(Fp8Linear& s, const at::Tensor& x2, const at::Tensor& w) {
  if (!s.measured_forward) measure(s, kX, x2);
  return gemm_of(s, cast(s, kX, x2, kernels::Fp8Kind::E4M3), w);
}

// The norm in front of a float8 linear: h = x + r (x itself without r), rstd, and the norm's output
// in `compute` as the linear's float8 input pair. One kernel (kernels::rms_norm_fp8) once the slot
// has a history; on its first use, for shapes that kernel does not take, and with the fused kernels
// switched off (fused::set_kernels_enabled: the norm's composite path), the norm's 16-bit output is
// made (fused::norm_forward) and cast as forward_gemm casts it. The same bytes either way.
struct NormedFp8 {
  at::Tensor h, rstd;
  std::pair<at::Tensor, at::Tensor> x8;
};
NormedFp8 normed_fp8(Fp8Linear& s, const at::Tensor& x_in, const at::Tensor& r_in, const at::Tensor& w,
                     at::ScalarType compute, double eps) {
  const int64_t cols = x_in.size(-1), rows = x_in.numel() / cols;
  if (s.measured_forward && fused::kernels_enabled() && kernels::rms_norm_fp8_takes(rows, cols)) {
    const at::Tensor x = x_in.contiguous(), wc = w.contiguous();
    const at::Tensor r = r_in.defined() ? r_in.to(compute).contiguous() : at::Tensor();
    NormedFp8 n{r.defined() ? at::empty_like(x) : x, at::empty({rows}, x.options().dtype(at::kFloat)), {}};
    const Fp8Pair p = fp8_pair(s, kX, rows, cols, kernels::Fp8Kind::E4M3, x.options());
    if (kernels::rms_norm_fp8(elem(x), elem(wc), elem(compute), x.data_ptr(), r.defined() ? r.data_ptr() : nullptr,
                              wc.data_ptr(), r.defined() ? n.h.data_ptr() : nullptr, n.rstd.data_ptr<float>(), rows,
                              cols, static_cast<float>(eps), p.history, p.current, p.inv_scale, p.q.data_ptr(),
                              p.qt.data_ptr(), at::cuda::getCurrentCUDAStream())) {
      n.x8 = launched(p, true);
      return n;
    }
  }
  const fused::NormOut o = fused::norm_forward(x_in, r_in, w, compute, eps);
  const at::Tensor y2 = o.y.reshape({rows, cols});
  if (!s.measured_forward) measure(s, kX, y2);
  return {o.h, o.rstd, cast(s, kX, y2, kernels::Fp8Kind::E4M3)};
}

// Its backward GEMMs from the output gradient's float8 pair: dx [M, K] = dy [M, N] @ w [N, K] in bf16,
// dw [N, K] = dy^T [N, M] @ x [M, K] in w's dtype (fp32 straight from the GEMM).
std::pair<at::Tensor, at::Tensor> backward_gemms(const Fp8Linear& s, const at::Tensor& dy8, const at::Tensor& dy8t,
                                                 const at::Tensor& x8t, const at::Tensor& w8t, at::ScalarType w_dtype) {
  const at::Tensor dx = gemm::scaled_mm(dy8, w8t.t(), scale_of(s, kDy), scale_of(s, kW), at::kBFloat16, false);
  const at::Tensor dw = gemm::scaled_mm(dy8t, x8t.t(), scale_of(s, kDy), scale_of(s, kX),
                                        w_dtype == at::kFloat ? at::kFloat : at::kBFloat16, false);
  return {dx, dw.to(w_dtype)};
}

at::ScalarType dtype_of(AutogradContext* ctx, const char* key) {
  return static_cast<at::ScalarType>(ctx->saved_data[key].toInt());
}

struct Fp8LinearFunction : torch::autograd::Function<Fp8LinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, int64_t state) {
    auto& s = *reinterpret_cast<Fp8Linear*>(state);
    const auto f = forward_gemm(s, x.reshape({-1, x.size(-1)}).contiguous(), w);
    ctx->save_for_backward({f.x8t, f.w8t});
    ctx->saved_data["state"] = state;
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
    auto sizes = x.sizes().vec();
    sizes.back() = w.size(0);
    return f.y.view(sizes);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& s = *reinterpret_cast<Fp8Linear*>(ctx->saved_data["state"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x8t = saved[0], &w8t = saved[1];  // [K, M], [K, N]
    const at::Tensor dy2 = grads[0].reshape({-1, w8t.size(1)}).to(at::kBFloat16).contiguous();
    const auto [dy8, dy8t] = gradient_fp8(s, dy2);
    const auto [dx, dw] = backward_gemms(s, dy8, dy8t, x8t, w8t, dtype_of(ctx, "w_dtype"));
    auto sizes = grads[0].sizes().vec();
    sizes.back() = x8t.size(0);
    return {dx.view(sizes).to(dtype_of(ctx, "x_dtype")), dw, at::Tensor()};
  }
};

// The block's first norm, the q/k/v projection and the rotary embedding as one node
// (fp8_norm_qkv_rope). The same values as fused::rms_norm_keep, Fp8LinearFunction and
// fused::rope_qkv: the norm writes the projection's float8 input itself (normed_fp8), and in
// backward the rotation's inverse is cast to float8 as it is computed (rope_qkv_backward_fp8) instead
// of written as a 16-bit dqkv for the cast kernel, except on first use and for shapes that kernel
// does not take; the norm's backward ends the node.
struct Fp8NormQkvRopeFunction : torch::autograd::Function<Fp8NormQkvRopeFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor norm_w, at::Tensor w, at::Tensor cos,
                               at::Tensor sin, double eps, int64_t compute, int64_t heads, int64_t kv_heads,
                               int64_t padded, int64_t state) {
    auto& s = *reinterpret_cast<Fp8Linear*>(state);
    const NormedFp8 n = normed_fp8(s, x, at::Tensor(), norm_w, static_cast<at::ScalarType>(compute), eps);
    const auto f = gemm_of(s, n.x8, w);
    auto sizes = x.sizes().vec();
    sizes.back() = w.size(0);
    const auto [q, k, v] = fused::rope_qkv(f.y.view(sizes), cos, sin, heads, kv_heads, padded);
    const int64_t T = x.size(1);
    const auto rows_of = [T](const at::Tensor& table) {  // the tables are usually made for T
      return table.size(0) == T && table.is_contiguous() ? table : table.narrow(0, 0, T).contiguous();
    };
    ctx->save_for_backward({n.h, norm_w, n.rstd, f.x8t, f.w8t, rows_of(cos), rows_of(sin)});
    ctx->saved_data["state"] = state;
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kv_heads"] = kv_heads;
    ctx->saved_data["head_dim"] = w.size(0) / (heads + 2 * kv_heads);
    ctx->saved_data["compute"] = compute;
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
    return {n.h, q, k, v};  // x passes through, as rms_norm_keep passes it
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& s = *reinterpret_cast<Fp8Linear*>(ctx->saved_data["state"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &h = saved[0], &norm_w = saved[1], &rstd = saved[2], &x8t = saved[3], &w8t = saved[4],
                     &c = saved[5], &sn = saved[6];  // x8t [K, M], w8t [K, N]
    const int64_t heads = ctx->saved_data["heads"].toInt(), kv_heads = ctx->saved_data["kv_heads"].toInt();
    const int64_t hd = ctx->saved_data["head_dim"].toInt(), n = w8t.size(1);
    const auto compute = static_cast<at::ScalarType>(ctx->saved_data["compute"].toInt());
    variable_list out(11);
    at::Tensor dn;  // the norm output's gradient; undefined (zeros for the norm) without q, k, v's
    const auto parts = fused::rope_qkv_grad_inputs({grads[1], grads[2], grads[3]}, heads, kv_heads);
    if (!parts.empty()) {
      std::pair<at::Tensor, at::Tensor> dy;
      if (s.measured_backward && parts[0].scalar_type() == at::kBFloat16 && parts[1].scalar_type() == at::kBFloat16 &&
          parts[2].scalar_type() == at::kBFloat16) {
        const Fp8Pair p = fp8_pair(s, kDy, x8t.size(1), n, kernels::Fp8Kind::E5M2, parts[0].options());
        const auto st = [](const at::Tensor& g) { return kernels::Strides3{g.stride(0), g.stride(1), g.stride(2)}; };
        if (kernels::rope_qkv_backward_fp8(kernels::ElemType::BF16, parts[0].data_ptr(), st(parts[0]),
                                           parts[1].data_ptr(), st(parts[1]), parts[2].data_ptr(), st(parts[2]),
                                           c.data_ptr<float>(), sn.data_ptr<float>(), parts[0].size(0),
                                           parts[0].size(1), heads, kv_heads, hd, p.history, p.current, p.inv_scale,
                                           p.q.data_ptr(), p.qt.data_ptr(), at::cuda::getCurrentCUDAStream()))
          dy = launched(p, true);
      }
      if (!dy.first.defined())  // first use, or a shape or layout that kernel does not take: two kernels
        dy =
            gradient_fp8(s, fused::rope_qkv_grad(parts, c, sn, heads, kv_heads, hd).reshape({-1, n}).to(at::kBFloat16));
      const auto [dx, dw] = backward_gemms(s, dy.first, dy.second, x8t, w8t, dtype_of(ctx, "w_dtype"));
      dn = dx.view(h.sizes()).to(compute);
      out[2] = dw;
    }
    fused::NormGrads g = fused::norm_backward(h, norm_w, rstd, dn, grads[0], /*residual=*/false, compute, compute);
    out[0] = std::move(g.dx);
    out[1] = std::move(g.dw);
    return out;
  }
};

// The block's second half as one node (fp8_norm_swiglu_mlp): the residual add and norm of
// fused::add_rms_norm, then the same values as Fp8LinearFunction, fused::swiglu and Fp8LinearFunction
// again, plus the residual. The norm writes w13's float8 input itself (normed_fp8); the two casts
// that read SwiGLU's 16-bit output (w2's input) and its gradient (w13's output gradient) are done by
// the SwiGLU kernels themselves, and w2's output gradient is cast from the residual's gradient as it
// comes, except on each slot's first use, which measures the amax of the 16-bit tensor first. The
// norm's backward ends the node, adding the residual's gradient.
struct Fp8NormSwigluMlpFunction : torch::autograd::Function<Fp8NormSwigluMlpFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor r, at::Tensor norm_w, at::Tensor w13,
                            at::Tensor w2, double eps, int64_t compute, int64_t up_state, int64_t down_state) {
    auto& up = *reinterpret_cast<Fp8Linear*>(up_state);
    auto& down = *reinterpret_cast<Fp8Linear*>(down_state);
    const int64_t ffn = w2.size(1);
    if (w13.size(0) != 2 * ffn) throw unsupported("fp8 SwiGLU: w13 must have twice w2's input rows");
    const NormedFp8 n = normed_fp8(up, x, r, norm_w, static_cast<at::ScalarType>(compute), eps);
    const auto f13 = gemm_of(up, n.x8, w13);
    const at::Tensor& gu = f13.y;  // [M, 2 ffn]
    const int64_t rows = gu.size(0);
    const auto stream = at::cuda::getCurrentCUDAStream();
    std::pair<at::Tensor, at::Tensor> s8;
    if (!down.measured_forward) {
      at::Tensor s = at::empty({rows, ffn}, gu.options());
      swiglu_launched(kernels::swiglu_forward(kernels::ElemType::BF16, gu.data_ptr(), s.data_ptr(), rows, ffn, stream));
      measure(down, kX, s);
      s8 = cast(down, kX, s, kernels::Fp8Kind::E4M3);
    } else {
      const Fp8Pair p = fp8_pair(down, kX, rows, ffn, kernels::Fp8Kind::E4M3, gu.options());
      s8 = launched(p, kernels::swiglu_fp8(kernels::ElemType::BF16, gu.data_ptr(), rows, ffn, p.history, p.current,
                                           p.inv_scale, p.q.data_ptr(), p.qt.data_ptr(), stream));
    }
    const auto [w2_8, w2_8t] = weight_fp8(down, w2);
    down.measured_forward = true;
    const at::Tensor y = gemm::scaled_mm(s8.first, w2_8.t(), scale_of(down, kX), scale_of(down, kW), at::kBFloat16,
                                         /*fast_accum=*/true);
    ctx->save_for_backward({n.h, norm_w, n.rstd, f13.x8t, f13.w8t, gu, s8.second, w2_8t});
    ctx->saved_data["up"] = up_state;
    ctx->saved_data["down"] = down_state;
    ctx->saved_data["compute"] = compute;
    ctx->saved_data["r_dtype"] = static_cast<int64_t>(r.scalar_type());
    ctx->saved_data["w13_dtype"] = static_cast<int64_t>(w13.scalar_type());
    ctx->saved_data["w2_dtype"] = static_cast<int64_t>(w2.scalar_type());
    auto sizes = x.sizes().vec();
    sizes.back() = w2.size(0);
    return fused::residual_add(n.h, y.view(sizes));  // in the residual's dtype, as the block's add was
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& up = *reinterpret_cast<Fp8Linear*>(ctx->saved_data["up"].toInt());
    auto& down = *reinterpret_cast<Fp8Linear*>(ctx->saved_data["down"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &h = saved[0], &norm_w = saved[1], &rstd = saved[2], &x8t = saved[3], &w13_8t = saved[4],
                     &gu = saved[5], &s8t = saved[6], &w2_8t = saved[7];
    const int64_t n = w2_8t.size(1), rows = gu.size(0), ffn = s8t.size(0);
    const auto compute = static_cast<at::ScalarType>(ctx->saved_data["compute"].toInt());
    const auto stream = at::cuda::getCurrentCUDAStream();
    // w2's output gradient is the residual's, fp32 under autocast: cast to float8 straight from it,
    // rounded to bf16 on the way (what converting it first would give), except on first use.
    const at::Tensor d_out = grads[0].reshape({-1, n}).contiguous();
    std::pair<at::Tensor, at::Tensor> dy;
    if (d_out.scalar_type() == at::kFloat && down.measured_backward) {
      const Fp8Pair p = fp8_pair(down, kDy, d_out.size(0), n, kernels::Fp8Kind::E5M2, d_out.options());
      dy = launched(p, kernels::fp8_cast_f32_as(kernels::ElemType::BF16, kernels::Fp8Kind::E5M2,
                                                d_out.data_ptr<float>(), d_out.size(0), n, p.history, p.current,
                                                p.inv_scale, p.q.data_ptr(), p.qt.data_ptr(), stream));
    } else {
      dy = gradient_fp8(down, d_out.to(at::kBFloat16));
    }
    // ds [M, F] = dy @ w2; dw2 [N, F] = dy^T @ s.
    const auto [ds, dw2] = backward_gemms(down, dy.first, dy.second, s8t, w2_8t, dtype_of(ctx, "w2_dtype"));
    std::pair<at::Tensor, at::Tensor> dgu;
    if (!up.measured_backward) {
      at::Tensor d = at::empty_like(gu);
      swiglu_launched(kernels::swiglu_backward(kernels::ElemType::BF16, gu.data_ptr(), ds.data_ptr(), d.data_ptr(),
                                               rows, ffn, stream));
      dgu = gradient_fp8(up, d);
    } else {
      const Fp8Pair p = fp8_pair(up, kDy, rows, 2 * ffn, kernels::Fp8Kind::E5M2, gu.options());
      dgu = launched(
          p, kernels::swiglu_backward_fp8(kernels::ElemType::BF16, gu.data_ptr(), ds.data_ptr(), rows, ffn, p.history,
                                          p.current, p.inv_scale, p.q.data_ptr(), p.qt.data_ptr(), stream));
    }
    // dn [M, K] = dgu @ w13; dw13 [2F, K] = dgu^T @ n.
    const auto [dn, dw13] = backward_gemms(up, dgu.first, dgu.second, x8t, w13_8t, dtype_of(ctx, "w13_dtype"));
    // The norm's backward, the residual's gradient added: x's (h's dtype) and r's (r's dtype).
    fused::NormGrads g = fused::norm_backward(h, norm_w, rstd, dn.view(h.sizes()).to(compute), grads[0],
                                              /*residual=*/true, dtype_of(ctx, "r_dtype"), compute);
    return {std::move(g.dx), std::move(g.dr), std::move(g.dw), dw13,        dw2,
            at::Tensor(),    at::Tensor(),    at::Tensor(),    at::Tensor()};
  }
};

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fp8_norm_qkv_rope(
    const at::Tensor& x, const at::Tensor& norm_w, double eps, at::ScalarType compute, const at::Tensor& w,
    const at::Tensor& cos, const at::Tensor& sin, int64_t heads, int64_t kv_heads, int64_t padded_head_dim,
    Fp8Linear& linear, const WeightCopy* copy) {
  linear.prepare(x, copy);
  const auto out = Fp8NormQkvRopeFunction::apply(x, norm_w, w, cos, sin, eps, static_cast<int64_t>(compute), heads,
                                                 kv_heads, padded_head_dim, reinterpret_cast<int64_t>(&linear));
  return {out[0], out[1], out[2], out[3]};
}

at::Tensor fp8_norm_swiglu_mlp(const at::Tensor& x, const at::Tensor& r, const at::Tensor& norm_w, double eps,
                               at::ScalarType compute, const at::Tensor& w13, const at::Tensor& w2, Fp8Linear& up,
                               Fp8Linear& down, const WeightCopy* c13, const WeightCopy* c2) {
  up.prepare(x, c13);
  down.prepare(x, c2);
  return Fp8NormSwigluMlpFunction::apply(x, r, norm_w, w13, w2, eps, static_cast<int64_t>(compute),
                                         reinterpret_cast<int64_t>(&up), reinterpret_cast<int64_t>(&down));
}

void Fp8Linear::prepare(const at::Tensor& x, const WeightCopy* copy) {
  if (!amax_history.defined()) {
    const auto opts = x.options().dtype(at::kFloat);
    amax_history = at::zeros({3 * kSlotStride}, opts);
    amax_current = at::zeros({3 * kSlotStride}, opts);
    inv_scale = at::ones({3 * kSlotStride}, opts);
    for (int64_t slot = 0; slot < 3; ++slot) slot_scale[slot] = inv_scale.narrow(0, slot * kSlotStride, 1);
  }
  const bool copied = copy && copy->fp8.defined();
  next_w8 = copied ? copy->fp8 : at::Tensor();
  next_w8t = copied ? copy->fp8_t : at::Tensor();
}

at::Tensor Fp8Linear::forward(const at::Tensor& x, const at::Tensor& w, const WeightCopy* copy) {
  prepare(x, copy);
  return Fp8LinearFunction::apply(x, w, reinterpret_cast<int64_t>(this));
}

WeightCopy Fp8Linear::new_weight_copy(const at::Tensor& w) {
  WeightCopy c;
  if (!amax_history.defined() || w.dim() != 2 || w.scalar_type() != at::kFloat) return c;
  const Fp8Pair p = fp8_pair(*this, kW, w.size(0), w.size(1), kernels::Fp8Kind::E4M3, w.options());
  c.fp8 = p.q;
  c.fp8_t = p.qt;
  c.amax_history = p.history;
  c.amax_current = p.current;
  c.inv_scale = p.inv_scale;
  return c;
}

bool fp8_supported(std::string* why) {
  if (!at::cuda::is_available()) {
    if (why) *why = "fp8 needs a CUDA GPU";
    return false;
  }
  const auto* p = at::cuda::getCurrentDeviceProperties();
  if (p->major < 9) {
    if (why)
      *why = std::string("fp8 matmuls need a Hopper GPU (compute capability 9.0, H100/H200); this is ") + p->name +
             " (" + std::to_string(p->major) + "." + std::to_string(p->minor) + ")";
    return false;
  }
  return true;
}

#else  // no CUDA or a libtorch without float8

namespace {
[[noreturn]] void no_fp8_build() {
  throw unsupported("fp8 needs a CUDA build of the worker against libtorch 2.1 or newer");
}
}  // namespace

void Fp8Linear::prepare(const at::Tensor&, const WeightCopy*) {}

at::Tensor Fp8Linear::forward(const at::Tensor&, const at::Tensor&, const WeightCopy*) { no_fp8_build(); }

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fp8_norm_qkv_rope(const at::Tensor&, const at::Tensor&,
                                                                             double, at::ScalarType, const at::Tensor&,
                                                                             const at::Tensor&, const at::Tensor&,
                                                                             int64_t, int64_t, int64_t, Fp8Linear&,
                                                                             const WeightCopy*) {
  no_fp8_build();
}

at::Tensor fp8_norm_swiglu_mlp(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, at::ScalarType,
                               const at::Tensor&, const at::Tensor&, Fp8Linear&, Fp8Linear&, const WeightCopy*,
                               const WeightCopy*) {
  no_fp8_build();
}

WeightCopy Fp8Linear::new_weight_copy(const at::Tensor&) { return {}; }

bool fp8_supported(std::string* why) {
  if (why) *why = "fp8 needs a CUDA build of the worker against libtorch 2.1 or newer and a Hopper GPU";
  return false;
}

#endif

}  // namespace tunebench::engine
