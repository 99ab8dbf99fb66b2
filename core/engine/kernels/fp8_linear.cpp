// Float8 linear layer: the autograd Function around at::_scaled_mm and the cast kernels.
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

kernels::ElemType elem(const at::Tensor& t) {
  switch (t.scalar_type()) {
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

// Casts a [rows, cols] tensor to float8 with the slot's delayed scale; returns (q, q^T), either
// of which may be skipped.
std::pair<at::Tensor, at::Tensor> cast(Fp8Linear& s, Slot slot, const at::Tensor& src, kernels::Fp8Kind kind,
                                       bool want_rows, bool want_transposed) {
  const int64_t rows = src.size(0), cols = src.size(1);
  const auto dtype = kind == kernels::Fp8Kind::E4M3 ? at::kFloat8_e4m3fn : at::kFloat8_e5m2;
  at::Tensor q = want_rows ? at::empty({rows, cols}, src.options().dtype(dtype)) : at::Tensor();
  at::Tensor qt = want_transposed ? at::empty({cols, rows}, src.options().dtype(dtype)) : at::Tensor();
  const int64_t at = slot * kSlotStride;
  const bool ok = kernels::fp8_cast(elem(src), kind, src.data_ptr(), rows, cols, s.amax_history.data_ptr<float>() + at,
                                    s.amax_current.data_ptr<float>() + at, s.inv_scale.data_ptr<float>() + at,
                                    q.defined() ? q.data_ptr() : nullptr, qt.defined() ? qt.data_ptr() : nullptr,
                                    at::cuda::getCurrentCUDAStream());
  if (!ok)
    throw unsupported("fp8 needs matrix sizes that are multiples of 16 (got " + std::to_string(rows) + "x" +
                      std::to_string(cols) + ")");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {q, qt};
}

// The first use of a slot has no history: measure its amax once.
void measure(Fp8Linear& s, Slot slot, const at::Tensor& src) {
  if (!kernels::fp8_amax(elem(src), src.data_ptr(), src.numel(), s.amax_history.data_ptr<float>() + slot * kSlotStride,
                         at::cuda::getCurrentCUDAStream()))
    throw unsupported("fp8 amax needs a 16-byte aligned tensor whose size is a multiple of 8");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor scale_of(const Fp8Linear& s, Slot slot) { return s.inv_scale.narrow(0, slot * kSlotStride, 1); }

struct Fp8LinearFunction : torch::autograd::Function<Fp8LinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, int64_t state) {
    auto& s = *reinterpret_cast<Fp8Linear*>(state);
    const int64_t k = x.size(-1), n = w.size(0);
    const at::Tensor x2 = x.reshape({-1, k}).contiguous();
    const bool copied = s.next_w8.defined();  // the optimizer's cast of w, scale already written
    if (!s.measured_forward) {
      measure(s, kX, x2);
      if (!copied) measure(s, kW, w.contiguous());
      s.measured_forward = true;
    }
    const auto [x8, x8t] = cast(s, kX, x2, kernels::Fp8Kind::E4M3, true, true);
    at::Tensor w8 = std::move(s.next_w8), w8t = std::move(s.next_w8t);
    s.next_w8 = at::Tensor();
    s.next_w8t = at::Tensor();
    if (!copied) std::tie(w8, w8t) = cast(s, kW, w.contiguous(), kernels::Fp8Kind::E4M3, true, true);
    const at::Tensor y = at::_scaled_mm(x8, w8.t(), scale_of(s, kX), scale_of(s, kW), std::nullopt, std::nullopt,
                                        at::kBFloat16, /*use_fast_accum=*/true);
    ctx->save_for_backward({x8t, w8t});
    ctx->saved_data["state"] = state;
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
    auto sizes = x.sizes().vec();
    sizes.back() = n;
    return y.view(sizes);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& s = *reinterpret_cast<Fp8Linear*>(ctx->saved_data["state"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x8t = saved[0];  // [K, M]
    const at::Tensor& w8t = saved[1];  // [K, N]
    const int64_t n = w8t.size(1);
    const at::Tensor dy2 = grads[0].reshape({-1, n}).to(at::kBFloat16).contiguous();
    if (!s.measured_backward) {
      measure(s, kDy, dy2);
      s.measured_backward = true;
    }
    const auto [dy8, dy8t] = cast(s, kDy, dy2, kernels::Fp8Kind::E5M2, true, true);
    const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const auto w_dtype = static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt());
    // dx [M, K] = dy [M, N] @ w [N, K]; dw [N, K] = dy^T [N, M] @ x [M, K].
    at::Tensor dx = at::_scaled_mm(dy8, w8t.t(), scale_of(s, kDy), scale_of(s, kW), std::nullopt, std::nullopt,
                                   at::kBFloat16, false);
    at::Tensor dw = at::_scaled_mm(dy8t, x8t.t(), scale_of(s, kDy), scale_of(s, kX), std::nullopt, std::nullopt,
                                   w_dtype == at::kFloat ? at::kFloat : at::kBFloat16, false);
    auto sizes = grads[0].sizes().vec();
    sizes.back() = x8t.size(0);
    return {dx.view(sizes).to(x_dtype), dw.to(w_dtype), at::Tensor()};
  }
};

}  // namespace

at::Tensor Fp8Linear::forward(const at::Tensor& x, const at::Tensor& w, const WeightCopy* copy) {
  if (!amax_history.defined()) {
    const auto opts = x.options().dtype(at::kFloat);
    amax_history = at::zeros({3 * kSlotStride}, opts);
    amax_current = at::zeros({3 * kSlotStride}, opts);
    inv_scale = at::ones({3 * kSlotStride}, opts);
  }
  const bool copied = copy && copy->fp8.defined();
  next_w8 = copied ? copy->fp8 : at::Tensor();
  next_w8t = copied ? copy->fp8_t : at::Tensor();
  return Fp8LinearFunction::apply(x, w, reinterpret_cast<int64_t>(this));
}

WeightCopy Fp8Linear::new_weight_copy(const at::Tensor& w) {
  WeightCopy c;
  if (!amax_history.defined() || w.dim() != 2 || w.scalar_type() != at::kFloat) return c;
  const auto opts = w.options().dtype(at::kFloat8_e4m3fn);
  c.fp8 = at::empty({w.size(0), w.size(1)}, opts);
  c.fp8_t = at::empty({w.size(1), w.size(0)}, opts);
  c.amax_history = amax_history.data_ptr<float>() + kW * kSlotStride;
  c.amax_current = amax_current.data_ptr<float>() + kW * kSlotStride;
  c.inv_scale = inv_scale.data_ptr<float>() + kW * kSlotStride;
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

at::Tensor Fp8Linear::forward(const at::Tensor&, const at::Tensor&, const WeightCopy*) {
  throw unsupported("fp8 needs a CUDA build of the worker against libtorch 2.1 or newer");
}

WeightCopy Fp8Linear::new_weight_copy(const at::Tensor&) { return {}; }

bool fp8_supported(std::string* why) {
  if (why) *why = "fp8 needs a CUDA build of the worker against libtorch 2.1 or newer and a Hopper GPU";
  return false;
}

#endif

}  // namespace tunebench::engine
