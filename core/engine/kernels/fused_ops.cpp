// Autograd Functions of the fused ops (see fused_ops.h). Each Function's forward and backward try
// the CUDA kernel first and fall back to the composite ATen version of the same formula, which is
// written out here once and serves as the CPU implementation and the GPU reference.
#include "core/engine/kernels/fused_ops.h"

#include <torch/csrc/autograd/custom_function.h>

#include "core/engine/compat.h"
#include "core/engine/kernels/gemm_search.h"
#include "core/rules/optimizer_rules.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "core/engine/kernels/fused_kernels.h"
#endif

namespace tunebench::engine::fused {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool kernels_built() {
#ifdef TUNEBENCH_WITH_CUDA
  return true;
#else
  return false;
#endif
}

namespace {
bool g_kernels_enabled = true;
}  // namespace

void set_kernels_enabled(bool enabled) { g_kernels_enabled = enabled; }
bool kernels_enabled() { return g_kernels_enabled; }

namespace {

// ============================================================================================
// Kernel plumbing
// ============================================================================================

#ifdef TUNEBENCH_WITH_CUDA
using kernels::ElemType;

std::optional<ElemType> elem_type(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return ElemType::F32;
    case at::kBFloat16:
      return ElemType::BF16;
    case at::kHalf:
      return ElemType::F16;
    default:
      return std::nullopt;
  }
}

// Whether the kernel path applies: kernels enabled and every given tensor on the GPU.
bool on_cuda(std::initializer_list<const at::Tensor*> tensors) {
  if (!g_kernels_enabled) return false;
  for (const at::Tensor* t : tensors)
    if (t->defined() && !t->is_cuda()) return false;
  return true;
}

cudaStream_t stream() { return at::cuda::getCurrentCUDAStream(); }

const void* ptr(const at::Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }
void* mut_ptr(const at::Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// Runs `launch` (a kernels:: launcher returning false when it does not cover the case) and checks
// the launch; returns whether the kernel ran.
template <class F>
bool try_kernel(F&& launch) {
  if (!launch()) return false;
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}
#endif

// The reference path's arithmetic: fp32, or fp64 for fp64 inputs (the GPU check's reference).
at::ScalarType acc(const at::Tensor& t) { return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

// dW = dy^T x in `out` dtype, straight from the GEMM where the libtorch can (fp32 accumulate).
at::Tensor weight_grad(const at::Tensor& dy2, const at::Tensor& x2, at::ScalarType out) {
  return gemm::mm(dy2.t(), x2, out);
}

// ============================================================================================
// RMSNorm (+ residual add)
// ============================================================================================

// The three norm Functions below share this forward and backward (norm_forward, norm_backward); r
// is undefined without the residual add (libtorch's Function::apply does not take undefined inputs,
// hence three classes).
struct NormImpl {
  // Returns {y} or, with r, {h, y}; with `keep` (no r), {x, y}: x passes through the node, so the
  // gradient that reaches it along the residual stream comes back here as dh and the norm's backward
  // kernel adds it, instead of autograd adding the two gradients of x in a kernel of its own.
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& r, const at::Tensor& w,
                               int64_t out_dtype, double eps, bool keep = false) {
    const auto ydt = static_cast<at::ScalarType>(out_dtype);
    const NormOut n = norm_forward(x, r, w, ydt, eps);
    ctx->save_for_backward({n.h, w, n.rstd});
    ctx->saved_data["residual"] = r.defined();
    ctx->saved_data["keep"] = keep;
    ctx->saved_data["r_dtype"] = static_cast<int64_t>(r.defined() ? r.scalar_type() : ydt);
    ctx->saved_data["y_dtype"] = out_dtype;
    if (r.defined() || keep) return {n.h, n.y};
    return {n.y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const bool residual = ctx->saved_data["residual"].toBool();
    const bool two = residual || ctx->saved_data["keep"].toBool();  // outputs {h, y}
    const NormGrads g =
        norm_backward(saved[0], saved[1], saved[2], two ? grads[1] : grads[0], two ? grads[0] : at::Tensor(), residual,
                      static_cast<at::ScalarType>(ctx->saved_data["r_dtype"].toInt()),
                      static_cast<at::ScalarType>(ctx->saved_data["y_dtype"].toInt()));
    if (residual) return {g.dx, g.dr, g.dw, at::Tensor(), at::Tensor()};
    return {g.dx, g.dw, at::Tensor(), at::Tensor()};
  }
};

struct RmsNormFunction : torch::autograd::Function<RmsNormFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, int64_t out_dtype, double eps) {
    return NormImpl::forward(ctx, x, at::Tensor(), w, out_dtype, eps);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) { return NormImpl::backward(ctx, grads); }
};

struct RmsNormKeepFunction : torch::autograd::Function<RmsNormKeepFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, int64_t out_dtype, double eps) {
    return NormImpl::forward(ctx, x, at::Tensor(), w, out_dtype, eps, /*keep=*/true);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) { return NormImpl::backward(ctx, grads); }
};

struct AddRmsNormFunction : torch::autograd::Function<AddRmsNormFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor r, at::Tensor w, int64_t out_dtype,
                               double eps) {
    return NormImpl::forward(ctx, x, r, w, out_dtype, eps);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) { return NormImpl::backward(ctx, grads); }
};

// ============================================================================================
// Rotary embedding of q and k
// ============================================================================================

}  // namespace

NormOut norm_forward(const at::Tensor& x_in, const at::Tensor& r_in, const at::Tensor& w, at::ScalarType ydt,
                     double eps) {
  const at::Tensor x = x_in.contiguous();
  const at::Tensor r = r_in.defined() ? r_in.to(ydt).contiguous() : at::Tensor();
  const int64_t cols = x.size(-1), rows = x.numel() / cols;
  at::Tensor h = r.defined() ? at::empty_like(x) : x;
  at::Tensor y, rstd;
  bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
  const auto tx = elem_type(x.scalar_type()), tw = elem_type(w.scalar_type()), ty = elem_type(ydt);
  if (on_cuda({&x, &r, &w}) && tx && tw && ty) {
    y = at::empty(x.sizes(), x.options().dtype(ydt));
    rstd = at::empty({rows}, x.options().dtype(at::kFloat));
    const at::Tensor wc = w.contiguous();
    done = try_kernel([&] {
      return kernels::rms_norm_forward(*tx, *tw, *ty, x.data_ptr(), ptr(r), wc.data_ptr(),
                                       r.defined() ? h.data_ptr() : nullptr, y.data_ptr(), rstd.data_ptr<float>(), rows,
                                       cols, static_cast<float>(eps), stream());
    });
  }
#endif
  if (!done) {
    if (r.defined()) h = (x + r).to(x.scalar_type());
    const at::Tensor hf = h.to(acc(h));
    const at::Tensor rs = at::rsqrt(hf.pow(2).mean(-1, /*keepdim=*/true) + eps);
    y = (w * (hf * rs).to(x.scalar_type())).to(ydt);
    rstd = rs.reshape({rows});
  }
  return {h, y, rstd};
}

NormGrads norm_backward(const at::Tensor& h, const at::Tensor& w, const at::Tensor& rstd, const at::Tensor& dy_in,
                        const at::Tensor& dh_in, bool residual, at::ScalarType rdt, at::ScalarType ydt) {
  const at::Tensor dh = dh_in.defined() ? dh_in.to(h.scalar_type()).contiguous() : at::Tensor();
  const at::Tensor dy = dy_in.defined() ? dy_in.to(ydt).contiguous() : at::zeros(h.sizes(), h.options().dtype(ydt));
  const int64_t cols = h.size(-1), rows = h.numel() / cols;
  at::Tensor dx, dr, dw;
  bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
  const auto tx = elem_type(h.scalar_type()), tw = elem_type(w.scalar_type()), ty = elem_type(ydt);
  if (on_cuda({&h, &w, &dy}) && tx && tw && ty && (!dh.defined() || dh.scalar_type() == h.scalar_type()) &&
      (!residual || rdt == ydt)) {
    const int blocks =
        kernels::rms_norm_backward_blocks(rows, at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
    dx = at::empty_like(h);
    if (residual) dr = at::empty(h.sizes(), h.options().dtype(rdt));
    at::Tensor partial = at::empty({blocks, cols}, h.options().dtype(at::kFloat));
    const at::Tensor wc = w.contiguous();
    done = try_kernel([&] {
      return kernels::rms_norm_backward(*tx, *tw, *ty, h.data_ptr(), wc.data_ptr(), dy.data_ptr(), ptr(dh),
                                        rstd.data_ptr<float>(), dx.data_ptr(), mut_ptr(dr), partial.data_ptr<float>(),
                                        blocks, rows, cols, stream(), /*dh_added=*/!residual);
    });
    if (done) dw = partial.sum(0).to(w.scalar_type());
  }
#endif
  if (!done) {
    const at::Tensor rs = rstd.reshape({rows, 1});
    const at::Tensor n = h.to(acc(h)).reshape({rows, cols}) * rs;
    const at::Tensor dyf = dy.to(acc(h)).reshape({rows, cols});
    const at::Tensor dn = dyf * w.to(acc(h));
    const at::Tensor dot = (dn * n).mean(-1, /*keepdim=*/true);
    at::Tensor dxf = rs * (dn - n * dot);
    if (dh.defined()) dxf = dxf + dh.to(acc(h)).reshape({rows, cols});
    dx = dxf.reshape(h.sizes()).to(h.scalar_type());
    if (residual) dr = dxf.reshape(h.sizes()).to(rdt);
    dw = (dyf * n).sum(0).to(w.scalar_type());
  }
  return {dx, dr, dw};
}

std::vector<at::Tensor> rope_qkv_grad_inputs(std::vector<at::Tensor> grads, int64_t heads, int64_t kv_heads) {
  at::Tensor ref;
  for (const auto& g : grads)
    if (g.defined()) ref = g;
  if (!ref.defined()) return {};
  const int64_t B = ref.size(0), T = ref.size(1), hdp = ref.size(3);
  for (size_t i = 0; i < 3; ++i) {
    if (!grads[i].defined()) grads[i] = at::zeros({B, T, i == 0 ? heads : kv_heads, hdp}, ref.options());
    if (grads[i].stride(3) != 1) grads[i] = grads[i].contiguous();
  }
  return grads;
}

at::Tensor rope_qkv_grad(const std::vector<at::Tensor>& dqkv_parts, const at::Tensor& c, const at::Tensor& s,
                         int64_t heads, int64_t kv_heads, int64_t hd) {
  const auto grads = rope_qkv_grad_inputs(dqkv_parts, heads, kv_heads);
  if (grads.empty()) return {};
  const at::Tensor& ref = grads[0];
  const int64_t B = ref.size(0), T = ref.size(1), hdp = ref.size(3);
  at::Tensor dqkv;
  bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
  const auto t = elem_type(ref.scalar_type());
  const bool same = grads[1].scalar_type() == ref.scalar_type() && grads[2].scalar_type() == ref.scalar_type();
  if (on_cuda({&grads[0], &grads[1], &grads[2]}) && t && same) {
    dqkv = at::empty({B, T, (heads + 2 * kv_heads) * hd}, ref.options());
    const auto st = [](const at::Tensor& g) { return kernels::Strides3{g.stride(0), g.stride(1), g.stride(2)}; };
    done = try_kernel([&] {
      return kernels::rope_qkv_backward(*t, grads[0].data_ptr(), st(grads[0]), grads[1].data_ptr(), st(grads[1]),
                                        grads[2].data_ptr(), st(grads[2]), c.data_ptr<float>(), s.data_ptr<float>(),
                                        dqkv.data_ptr(), B, T, heads, kv_heads, hd, stream());
    });
  }
#endif
  if (!done) {
    const auto unpad = [&](const at::Tensor& g) { return hdp == hd ? g : g.narrow(-1, 0, hd); };
    const at::ScalarType dt = grads[0].scalar_type();
    dqkv = at::cat({rotate_pairs(unpad(grads[0]), c, s, true).reshape({B, T, heads * hd}),
                    rotate_pairs(unpad(grads[1]), c, s, true).to(dt).reshape({B, T, kv_heads * hd}),
                    unpad(grads[2]).to(dt).reshape({B, T, kv_heads * hd})},
                   -1);
  }
  return dqkv;
}

namespace {

struct RopeQkvFunction : torch::autograd::Function<RopeQkvFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor qkv, at::Tensor cos, at::Tensor sin, int64_t heads,
                               int64_t kv_heads, int64_t padded) {
    qkv = qkv.contiguous();
    const int64_t B = qkv.size(0), T = qkv.size(1), hd = qkv.size(2) / (heads + 2 * kv_heads);
    const int64_t hdp = std::max(padded, hd);
    const at::Tensor c = cos.narrow(0, 0, T).contiguous(), s = sin.narrow(0, 0, T).contiguous();
    at::Tensor q, k, v;
    bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
    const auto t = elem_type(qkv.scalar_type());
    if (on_cuda({&qkv, &c}) && t && c.scalar_type() == at::kFloat) {
      q = at::empty({B, T, heads, hdp}, qkv.options());
      k = at::empty({B, T, kv_heads, hdp}, qkv.options());
      v = at::empty_like(k);
      done = try_kernel([&] {
        return kernels::rope_qkv_forward(*t, qkv.data_ptr(), c.data_ptr<float>(), s.data_ptr<float>(), q.data_ptr(),
                                         k.data_ptr(), v.data_ptr(), B, T, heads, kv_heads, hd, hdp, stream());
      });
    }
#endif
    if (!done) {
      const auto parts = qkv.split({heads * hd, kv_heads * hd, kv_heads * hd}, -1);
      const auto pad = [&](const at::Tensor& x) { return hdp == hd ? x : at::constant_pad_nd(x, {0, hdp - hd}); };
      q = pad(rotate_pairs(parts[0].reshape({B, T, heads, hd}), c, s, false));
      k = pad(rotate_pairs(parts[1].reshape({B, T, kv_heads, hd}), c, s, false));
      v = pad(parts[2].reshape({B, T, kv_heads, hd})).contiguous();
    }
    ctx->save_for_backward({c, s});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kv_heads"] = kv_heads;
    ctx->saved_data["head_dim"] = hd;
    return {q, k, v};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    variable_list out(6);
    out[0] = rope_qkv_grad(grads, saved[0], saved[1], ctx->saved_data["heads"].toInt(),
                           ctx->saved_data["kv_heads"].toInt(), ctx->saved_data["head_dim"].toInt());
    return out;
  }
};

// ============================================================================================
// SwiGLU
// ============================================================================================

struct SwigluFunction : torch::autograd::Function<SwigluFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor gu) {
    gu = gu.contiguous();
    const int64_t ffn = gu.size(-1) / 2;
    auto out_sizes = gu.sizes().vec();
    out_sizes.back() = ffn;
    at::Tensor out;
    bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
    const int64_t rows = gu.numel() / gu.size(-1);
    const auto t = elem_type(gu.scalar_type());
    if (on_cuda({&gu}) && t) {
      out = at::empty(out_sizes, gu.options());
      done =
          try_kernel([&] { return kernels::swiglu_forward(*t, gu.data_ptr(), out.data_ptr(), rows, ffn, stream()); });
    }
#endif
    if (!done) {
      const auto parts = gu.to(acc(gu)).chunk(2, -1);
      out = (parts[0] * at::sigmoid(parts[0]) * parts[1]).to(gu.scalar_type());
    }
    ctx->save_for_backward({gu});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor gu = ctx->get_saved_variables()[0];
    const at::Tensor dout = grads[0].to(gu.scalar_type()).contiguous();
    at::Tensor dgu;
    bool done = false;
#ifdef TUNEBENCH_WITH_CUDA
    const int64_t ffn = gu.size(-1) / 2, rows = gu.numel() / gu.size(-1);
    const auto t = elem_type(gu.scalar_type());
    if (on_cuda({&gu, &dout}) && t) {
      dgu = at::empty_like(gu);
      done = try_kernel([&] {
        return kernels::swiglu_backward(*t, gu.data_ptr(), dout.data_ptr(), dgu.data_ptr(), rows, ffn, stream());
      });
    }
#endif
    if (!done) {
      const auto parts = gu.to(acc(gu)).chunk(2, -1);
      const at::Tensor& g = parts[0];
      const at::Tensor& u = parts[1];
      const at::Tensor d = dout.to(acc(gu));
      const at::Tensor s = at::sigmoid(g);
      dgu = at::cat({d * u * s * (1 + g * (1 - s)), d * g * s}, -1).to(gu.scalar_type());
    }
    return {dgu};
  }
};

// ============================================================================================
// Mixed-precision linear
// ============================================================================================

// `wsrc` is w itself, or w's copy in the compute dtype (Function::apply takes no undefined tensor).
// The forward and backward of x @ w^T, shared by LinearFunction and LinearResidualFunction.
// `dw_half`: the address of linear()'s dw_half, or 0.
at::Tensor linear_forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w, const at::Tensor& wsrc,
                          int64_t compute, int64_t dw_half) {
  const auto cd = static_cast<at::ScalarType>(compute);
  const at::Tensor xc = x.scalar_type() == cd ? x : x.to(cd);
  const at::Tensor wc = wsrc.scalar_type() == cd ? wsrc : wsrc.to(cd);
  ctx->save_for_backward({xc, wc});
  ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
  ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
  ctx->saved_data["dw_half"] = dw_half;
  std::vector<int64_t> sizes = xc.sizes().vec();
  sizes.back() = wc.size(0);
  return gemm::mm(xc.reshape({-1, wc.size(1)}), wc.t(), cd).view(sizes);
}

// {dx, dw} from the output's gradient; dw undefined when it went to linear()'s dw_half.
std::pair<at::Tensor, at::Tensor> linear_backward(AutogradContext* ctx, const at::Tensor& grad) {
  const auto saved = ctx->get_saved_variables();
  const at::Tensor& xc = saved[0];
  const at::Tensor& wc = saved[1];
  const at::Tensor dy = grad.to(wc.scalar_type());
  const int64_t n = wc.size(0), k = wc.size(1);
  const at::Tensor dy2 = dy.reshape({-1, n});
  at::Tensor dx = gemm::mm(dy2, wc, wc.scalar_type())
                      .view(xc.sizes())
                      .to(static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt()));
  auto* dw_half = reinterpret_cast<at::Tensor*>(ctx->saved_data["dw_half"].toInt());
  at::Tensor dw = weight_grad(dy2, xc.reshape({-1, k}),
                              dw_half ? wc.scalar_type() : static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt()));
  if (dw_half) {
    if (dw_half->defined()) dw_half->add_(dw);
    else *dw_half = std::move(dw);
    dw = at::Tensor();
  }
  return {std::move(dx), std::move(dw)};
}

struct LinearFunction : torch::autograd::Function<LinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, at::Tensor wsrc, int64_t compute,
                            int64_t dw_half) {
    return linear_forward(ctx, x, w, wsrc, compute, dw_half);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto [dx, dw] = linear_backward(ctx, grads[0]);
    return {dx, dw, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// residual + x @ w^T: the block's closing add in the node, one vectorised kernel (residual_add)
// where ATen would convert element by element; the residual's gradient is the output's.
struct LinearResidualFunction : torch::autograd::Function<LinearResidualFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor w, at::Tensor wsrc, at::Tensor residual,
                            int64_t compute, int64_t dw_half) {
    ctx->saved_data["r_dtype"] = static_cast<int64_t>(residual.scalar_type());
    return residual_add(residual, linear_forward(ctx, x, w, wsrc, compute, dw_half));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto [dx, dw] = linear_backward(ctx, grads[0]);
    const at::Tensor dr = grads[0].to(static_cast<at::ScalarType>(ctx->saved_data["r_dtype"].toInt()));
    return {dx, dw, at::Tensor(), dr, at::Tensor(), at::Tensor()};
  }
};

// ============================================================================================
// Linear + cross-entropy
// ============================================================================================

// Loss per row and, in place of the logits, their gradient (softmax - onehot) * scale.
at::Tensor cross_entropy_in_place(at::Tensor& logits, const at::Tensor& targets, double scale) {
  const int64_t rows = logits.size(0);
#ifdef TUNEBENCH_WITH_CUDA
  const int64_t vocab = logits.size(1);
  const auto t = elem_type(logits.scalar_type());
  if (on_cuda({&logits, &targets}) && t && targets.scalar_type() == at::kLong) {
    at::Tensor loss_rows = at::empty({rows}, logits.options().dtype(at::kFloat));
    const at::Tensor tg = targets.contiguous();
    if (try_kernel([&] {
          return kernels::cross_entropy_forward_backward(*t, logits.data_ptr(), tg.data_ptr<int64_t>(),
                                                         loss_rows.data_ptr<float>(), rows, vocab,
                                                         static_cast<float>(scale), stream());
        }))
      return loss_rows;
  }
#endif
  const at::Tensor lf = logits.to(acc(logits));
  const at::Tensor lse = at::logsumexp(lf, 1, /*keepdim=*/true);
  const at::Tensor tg = targets.reshape({rows, 1});
  const at::Tensor loss_rows = (lse - lf.gather(1, tg)).reshape({rows});
  at::Tensor grad = at::exp(lf - lse);
  grad.scatter_add_(1, tg, at::full({rows, 1}, -1.0, grad.options()));
  logits.copy_(grad * scale);
  return loss_rows;
}

// The embedding lookup with a sparse weight gradient (embedding_rows).
struct EmbeddingRowsFunction : torch::autograd::Function<EmbeddingRowsFunction> {
  // rows, compact: distinct_tokens(ids). at::embedding's backward on the compact indices sums
  // exactly what it sums on the vocabulary's, row for row (it depends on which positions share a
  // token, not on the token).
  static at::Tensor forward(AutogradContext* ctx, at::Tensor w, at::Tensor ids, at::Tensor rows, at::Tensor compact) {
    ctx->save_for_backward({rows, compact});
    ctx->saved_data["vocab"] = w.size(0);
    return at::embedding(w, ids);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &rows = saved[0], &compact = saved[1];
    const at::Tensor sums = at::embedding_backward(grads[0], compact, rows.size(0), /*padding_idx=*/-1,
                                                   /*scale_grad_by_freq=*/false, /*sparse=*/false);
    const int64_t vocab = ctx->saved_data["vocab"].toInt();
    at::Tensor dw = at::_sparse_coo_tensor_unsafe(rows.reshape({1, -1}), sums, {vocab, sums.size(1)},
                                                  sums.options().layout(at::kSparse));
    dw._coalesced_(true);  // distinct, sorted rows
    return {dw, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct LinearCrossEntropyFunction : torch::autograd::Function<LinearCrossEntropyFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor h, at::Tensor w, at::Tensor wsrc, at::Tensor targets,
                            int64_t compute, int64_t chunk_rows) {
    const auto cd = static_cast<at::ScalarType>(compute);
    const at::Tensor hc = (h.scalar_type() == cd ? h : h.to(cd)).contiguous();
    const at::Tensor wc = wsrc.scalar_type() == cd ? wsrc : wsrc.to(cd);
    const int64_t rows = hc.size(0), vocab = wc.size(0);
    const int64_t chunk = chunk_rows > 0 ? chunk_rows : rules::loss_chunk_rows(rows, vocab);
    const double scale = 1.0 / static_cast<double>(rows);
    at::Tensor dh = at::empty_like(hc);
    at::Tensor dw;
    std::vector<at::Tensor> losses;
    for (int64_t start = 0; start < rows; start += chunk) {
      const int64_t n = std::min(chunk, rows - start);
      const at::Tensor hs = hc.narrow(0, start, n);
      at::Tensor logits = gemm::mm(hs, wc.t(), cd);
      losses.push_back(cross_entropy_in_place(logits, targets.narrow(0, start, n), scale));
      at::Tensor dh_rows = dh.narrow(0, start, n);
      at::mm_out(dh_rows, logits, wc);
      const at::Tensor part = weight_grad(logits, hs, w.scalar_type() == at::kFloat ? at::kFloat : cd);
      dw = dw.defined() ? dw.add_(part) : part;
    }
    ctx->save_for_backward({dh, dw});
    ctx->saved_data["h_dtype"] = static_cast<int64_t>(h.scalar_type());
    ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
    return at::cat(losses).sum() * scale;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // The saved dW may have been scaled in place by an earlier backward of this node (below): a
    // second one (retain_graph) would scale it again.
    TORCH_CHECK(!ctx->saved_data.count("dw_scaled"),
                "compile fused: the fused loss's backward ran twice on one graph (retain_graph), which it "
                "does not support");
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& g = grads[0];
    const at::Tensor dh = (saved[0] * g).to(static_cast<at::ScalarType>(ctx->saved_data["h_dtype"].toInt()));
    const auto w_dtype = static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt());
    at::Tensor dw = saved[1];
#ifdef TUNEBENCH_WITH_CUDA
    // The head's weight gradient is the largest tensor of the step's backward (vocabulary x dim):
    // scaled in place, and not at all when the loss gradient is 1 (a plain step), instead of a new
    // product tensor. Not when the backward builds a graph (create_graph): dW must then depend on g.
    const at::Tensor gf = g.defined() && g.scalar_type() == at::kFloat ? g.contiguous() : at::Tensor();
    if (!at::GradMode::is_enabled() && gf.defined() && gf.numel() == 1 && dw.scalar_type() == at::kFloat &&
        w_dtype == at::kFloat && dw.is_contiguous() && on_cuda({&dw, &gf}) && try_kernel([&] {
          return kernels::scale_in_place(dw.data_ptr<float>(), dw.numel(), gf.data_ptr<float>(), stream());
        })) {
      ctx->saved_data["dw_scaled"] = true;
      return {dh, dw, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    }
#endif
    dw = (dw * g).to(w_dtype);
    return {dh, dw, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

// ============================================================================================
// Entry points
// ============================================================================================

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, at::ScalarType out_dtype, double eps) {
  return RmsNormFunction::apply(x, w, static_cast<int64_t>(out_dtype), eps)[0];
}

std::tuple<at::Tensor, at::Tensor> rms_norm_keep(const at::Tensor& x, const at::Tensor& w, at::ScalarType out_dtype,
                                                 double eps) {
  const auto out = RmsNormKeepFunction::apply(x, w, static_cast<int64_t>(out_dtype), eps);
  return {out[0], out[1]};
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w,
                                                at::ScalarType out_dtype, double eps) {
  const auto out = AddRmsNormFunction::apply(x, r, w, static_cast<int64_t>(out_dtype), eps);
  return {out[0], out[1]};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> rope_qkv(const at::Tensor& qkv, const at::Tensor& cos,
                                                        const at::Tensor& sin, int64_t heads, int64_t kv_heads,
                                                        int64_t padded_head_dim) {
  const auto out = RopeQkvFunction::apply(qkv, cos, sin, heads, kv_heads, padded_head_dim);
  return {out[0], out[1], out[2]};
}

at::Tensor swiglu(const at::Tensor& gu) { return SwigluFunction::apply(gu); }

at::Tensor rotate_pairs(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool inverse) {
  const at::Tensor pairs = x.unflatten(-1, {x.size(-1) / 2, 2});
  const at::Tensor x1 = pairs.select(-1, 0), x2 = pairs.select(-1, 1);
  const at::Tensor c = cos.unsqueeze(0).unsqueeze(2), s = sin.unsqueeze(0).unsqueeze(2);
  const at::Tensor out =
      inverse ? at::stack({x1 * c + x2 * s, x2 * c - x1 * s}, -1) : at::stack({x1 * c - x2 * s, x1 * s + x2 * c}, -1);
  return out.flatten(-2).to(x.scalar_type());
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& w, at::ScalarType compute, const at::Tensor& w_compute,
                  at::Tensor* dw_half) {
  return LinearFunction::apply(x, w, w_compute.defined() ? w_compute : w, static_cast<int64_t>(compute),
                               reinterpret_cast<int64_t>(dw_half));
}

at::Tensor linear_residual(const at::Tensor& x, const at::Tensor& w, const at::Tensor& residual, at::ScalarType compute,
                           const at::Tensor& w_compute, at::Tensor* dw_half) {
  return LinearResidualFunction::apply(x, w, w_compute.defined() ? w_compute : w, residual,
                                       static_cast<int64_t>(compute), reinterpret_cast<int64_t>(dw_half));
}

at::Tensor residual_add(const at::Tensor& h, const at::Tensor& y) {
#ifdef TUNEBENCH_WITH_CUDA
  const auto th = elem_type(h.scalar_type()), ty = elem_type(y.scalar_type());
  if (on_cuda({&h, &y}) && th && ty && h.sizes() == y.sizes() && at::result_type(h, y) == h.scalar_type() &&
      h.is_contiguous() && y.is_contiguous()) {
    at::Tensor out = at::empty_like(h);
    if (try_kernel([&] {
          return kernels::residual_add(*th, *ty, h.data_ptr(), y.data_ptr(), out.data_ptr(), h.numel(), stream());
        }))
      return out;
  }
#endif
  return h + y;
}

std::pair<at::Tensor, at::Tensor> distinct_tokens(const at::Tensor& ids) {
  const auto [rows, compact, counts] = at::_unique2(ids, /*sorted=*/true, /*return_inverse=*/true, false);
  (void)counts;
  return {rows.to(at::kLong), compact.reshape(ids.sizes())};
}

at::Tensor embedding_rows(const at::Tensor& w, const at::Tensor& ids, at::Tensor rows, at::Tensor compact) {
  if (!rows.defined() || !compact.defined()) std::tie(rows, compact) = distinct_tokens(ids);
  return EmbeddingRowsFunction::apply(w, ids, rows, compact);
}

at::Tensor linear_cross_entropy(const at::Tensor& h, const at::Tensor& w, const at::Tensor& targets,
                                at::ScalarType compute, int64_t chunk_rows, const at::Tensor& w_compute) {
  return LinearCrossEntropyFunction::apply(h, w, w_compute.defined() ? w_compute : w, targets,
                                           static_cast<int64_t>(compute), chunk_rows);
}

}  // namespace tunebench::engine::fused
