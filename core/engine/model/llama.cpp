#include "core/engine/model/llama.h"

#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

#include "core/engine/compat.h"
#include "core/engine/kernels/fp8_linear.h"
#include "core/engine/kernels/fused_ops.h"
#include "core/metrics/flops.h"

namespace tunebench::engine {

namespace {
constexpr double kNormEps = 1e-5;

// RMSNorm exactly as the reference: w * (x * rsqrt(mean(x^2) + eps)).type_as(x), in fp32 inside.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w) {
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + kNormEps);
  return w * normed.to(x.scalar_type());
}

}  // namespace

std::vector<std::vector<int64_t>> LlamaModel::unit_shapes(const config::ModelDims& d, size_t unit) {
  if (unit == 0) return {{d.vocab, d.dim}};
  if (unit == static_cast<size_t>(d.layers) + 1) {
    if (d.tie_embeddings) return {{d.dim}};
    return {{d.dim}, {d.vocab, d.dim}};
  }
  // attn_norm, wqkv (q rows, then k and v rows of kv_heads each), wo, ffn_norm, w13, w2
  // (nn.Linear weights are [out, in])
  return {{d.dim}, {d.qkv_dim(), d.dim}, {d.dim, d.dim}, {d.dim}, {2 * d.ffn, d.dim}, {d.dim, d.ffn}};
}

int64_t numel_of(const std::vector<std::vector<int64_t>>& shapes) {
  int64_t n = 0;
  for (const auto& s : shapes) {
    int64_t k = 1;
    for (auto v : s) k *= v;
    n += k;
  }
  return n;
}

std::vector<at::Tensor> views_of(const at::Tensor& flat, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<at::Tensor> out;
  out.reserve(shapes.size());
  int64_t offset = 0;
  for (const auto& s : shapes) {
    int64_t k = 1;
    for (auto v : s) k *= v;
    out.push_back(flat.narrow(0, offset, k).view(s));
    offset += k;
  }
  return out;
}

LlamaModel::LlamaModel(const config::ModelDims& dims, at::TensorOptions options) : m_dims(dims) {
  const size_t n_units = static_cast<size_t>(dims.layers) + 2;
  m_units.reserve(n_units);
  at::NoGradGuard no_grad;
  for (size_t u = 0; u < n_units; ++u) {
    ModelUnit unit;
    const auto shapes = unit_shapes(dims, u);
    unit.flat = at::empty({numel_of(shapes)}, options);
    if (u == 0) {
      unit.name = "embedding";
      unit.param_names = {"tok_embeddings.weight"};
    } else if (u == n_units - 1) {
      unit.name = "head";
      unit.param_names = {"norm.weight"};
      if (!dims.tie_embeddings) unit.param_names.push_back("output.weight");
    } else {
      unit.name = "block " + std::to_string(u - 1);
      const std::string p = "layers." + std::to_string(u - 1) + ".";
      unit.param_names = {p + "attn_norm", p + "wqkv", p + "wo", p + "ffn_norm", p + "w13", p + "w2"};
    }
    for (at::Tensor& v : views_of(unit.flat, shapes)) {
      if (v.dim() >= 2)
        v.normal_(0.0, 0.02);
      else
        v.fill_(1.0);
      unit.params.push_back(v.detach().requires_grad_(true));  // a leaf sharing the flat storage
    }
    m_units.push_back(std::move(unit));
  }
}

LlamaModel::~LlamaModel() = default;

void LlamaModel::set_kernels(ModelKernels kernels) {
  m_kernels = kernels;
  m_kernels.half_weight_grads = kernels.half_weight_grads && kernels.fused && !kernels.fp8;
  m_half_grads.clear();
  if (m_kernels.half_weight_grads)
    for (const auto& u : m_units) m_half_grads.emplace_back(u.params.size());
  m_fp8.clear();
  if (m_kernels.fp8)
    for (int64_t i = 0; i < 4 * m_dims.layers; ++i) m_fp8.push_back(std::make_unique<Fp8Linear>());
}

void LlamaModel::end_step() {
  for (auto& f : m_fp8) f->end_step();
}

std::vector<at::Tensor> LlamaModel::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& u : m_units) out.insert(out.end(), u.params.begin(), u.params.end());
  return out;
}

std::vector<at::Tensor> LlamaModel::take_half_weight_grads() {
  std::vector<at::Tensor> out;
  for (size_t u = 0; u < m_units.size(); ++u)
    for (size_t i = 0; i < m_units[u].params.size(); ++i)
      out.push_back(u < m_half_grads.size() ? std::exchange(m_half_grads[u][i], at::Tensor()) : at::Tensor());
  return out;
}

at::Tensor* LlamaModel::half_grad_slot(size_t unit, size_t param) const {
  if (unit >= m_half_grads.size() || param >= m_half_grads[unit].size()) return nullptr;
  return &m_half_grads[unit][param];
}

void LlamaModel::prepare_rope(int64_t seq_len, c10::Device device) {
  if (m_rope_cos.defined() && m_rope_cos.size(0) == seq_len && m_rope_cos.device() == device) return;
  const int64_t hd = m_dims.head_dim();
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor inv = 1.0 / at::pow(m_dims.rope_theta, at::arange(0, hd, 2, opts) / static_cast<double>(hd));
  const at::Tensor freqs = at::outer(at::arange(seq_len, opts), inv);
  m_rope_cos = freqs.cos();
  m_rope_sin = freqs.sin();
}

at::Tensor LlamaModel::block_forward(const at::Tensor& x, const std::vector<at::Tensor>& p) const {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  const int64_t H = m_dims.heads, KV = m_dims.kv_head_count(), hd = m_dims.head_dim();
  const auto cos = m_rope_cos.narrow(0, 0, T);
  const auto sin = m_rope_sin.narrow(0, 0, T);
  // attention: q, k, v split off the fused projection (k and v kv_heads wide)
  const auto parts = at::linear(rms_norm(x, p[0]), p[1]).split({D, KV * hd, KV * hd}, -1);
  // A head size the chosen kernel takes padded (trainer's choose_attention: a multiple of 8) is
  // padded here with zero columns, which add nothing to QK^T and give zero output columns; the
  // scale stays the real head size's. SDPA would otherwise pad and copy inside, and only for flash.
  const int64_t hdp = m_kernels.attention_head_dim > hd ? m_kernels.attention_head_dim : hd;
  const auto heads = [&](const at::Tensor& t) { return hdp != hd ? at::constant_pad_nd(t, {0, hdp - hd}) : t; };
  const at::Tensor q = heads(fused::rotate_pairs(parts[0].view({B, T, H, hd}), cos, sin)).transpose(1, 2);
  const at::Tensor k = heads(fused::rotate_pairs(parts[1].view({B, T, KV, hd}), cos, sin)).transpose(1, 2);
  const at::Tensor v = heads(parts[2].view({B, T, KV, hd})).transpose(1, 2);
  const double scale = hdp != hd ? 1.0 / std::sqrt(static_cast<double>(hd)) : 0.0;  // 0: SDPA's own
  at::Tensor a = compat::causal_attention(q, k, v, scale).transpose(1, 2);
  if (hdp != hd) a = a.narrow(-1, 0, hd);
  const at::Tensor h = x + at::linear(a.reshape({B, T, D}), p[2]);
  // SwiGLU feed-forward
  const auto gu = at::linear(rms_norm(h, p[3]), p[4]).chunk(2, -1);
  return h + at::linear(at::silu(gu[0]) * gu[1], p[5]);
}

namespace {
constexpr size_t kParamOf[] = {1, 2, 4, 5};  // wqkv, wo, w13, w2 within a block's unit
}  // namespace

// The same block as block_forward, through the fused ops (kernels/fused_ops.h). The final residual
// add is not fused into the next norm, which belongs to another unit (FSDP shards and checkpoints
// whole units): it is part of w2's node instead (linear_residual; in fp8, fp8_norm_swiglu_mlp).
at::Tensor LlamaModel::fused_block_forward(size_t block, const at::Tensor& x, const std::vector<at::Tensor>& p) const {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  const int64_t hd = m_dims.head_dim();
  const int64_t hdp = m_kernels.attention_head_dim > hd ? m_kernels.attention_head_dim : hd;
  const at::ScalarType cd = m_kernels.compute;
  // attention: q, k, v rotated (and padded to hdp) by one kernel straight from the projection
  // x passes through its norm's node: the residual gradient is added by the norm's backward kernel
  at::Tensor xr, q, k, v;
  if (m_kernels.fp8) {
    // Under amp fp8 the norm, the projection and the rotation are one node: the norm writes the
    // projection's float8 input, the rotation's backward its float8 gradient (kernels/fp8_linear.h).
    std::tie(xr, q, k, v) =
        fp8_norm_qkv_rope(x, p[0], kNormEps, cd, p[1], m_rope_cos, m_rope_sin, m_dims.heads, m_dims.kv_head_count(),
                          hdp, fp8_linear(block, 0), fp8_weight_copy(block + 1, kParamOf[0]));
  } else {
    at::Tensor n1;
    std::tie(xr, n1) = fused::rms_norm_keep(x, p[0], cd, kNormEps);
    std::tie(q, k, v) = fused::rope_qkv(block_linear(block, 0, n1, p[1]), m_rope_cos, m_rope_sin, m_dims.heads,
                                        m_dims.kv_head_count(), hdp);
  }
  // Padded heads: zero columns add nothing to QK^T and give zero output columns; the scale stays
  // the real head size's.
  const double scale = hdp != hd ? 1.0 / std::sqrt(static_cast<double>(hd)) : 0.0;  // 0: SDPA's own
  at::Tensor a =
      compat::causal_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale).transpose(1, 2);
  if (hdp != hd) a = a.narrow(-1, 0, hd);
  const at::Tensor o = block_linear(block, 1, a.reshape({B, T, D}), p[2]);
  // SwiGLU feed-forward, its norm fused with the residual add before it
  at::Tensor y;
  if (m_kernels.fp8) {  // one node, whose norm and SwiGLU kernels write float8 (kernels/fp8_linear.h)
    y = fp8_norm_swiglu_mlp(xr, o, p[3], kNormEps, cd, p[4], p[5], fp8_linear(block, 2), fp8_linear(block, 3),
                            fp8_weight_copy(block + 1, kParamOf[2]), fp8_weight_copy(block + 1, kParamOf[3]));
  } else {
    const auto [h, n2] = fused::add_rms_norm(xr, o, p[3], cd, kNormEps);
    const at::Tensor s = fused::swiglu(block_linear(block, 2, n2, p[4]));
    y = fused::linear_residual(s, p[5], h, cd, weight_copy(block + 1, kParamOf[3]),
                               half_grad_slot(block + 1, kParamOf[3]));
  }
  return y;
}

// The block's matmuls: float8 with delayed scaling (amp fp8), else bf16/fp16 with fp32 weight grads.
at::Tensor LlamaModel::block_linear(size_t block, int which, const at::Tensor& x, const at::Tensor& w) const {
  const size_t param = kParamOf[which];
  if (m_kernels.fp8)
    return fp8_linear(block, static_cast<size_t>(which)).forward(x, w, fp8_weight_copy(block + 1, param));
  return fused::linear(x, w, m_kernels.compute, weight_copy(block + 1, param), half_grad_slot(block + 1, param));
}

// ============================================================================================
// Weight copies from the optimizer
// ============================================================================================

WeightCopies LlamaModel::new_weight_copies(size_t u) {
  if (m_copy_flat.size() != m_units.size()) {
    m_copy_flat.assign(m_units.size(), at::Tensor());
    m_copy_views.assign(m_units.size(), {});
  }
  if (u == 0 && !m_dims.tie_embeddings) {  // the lookup reads the fp32 table: nothing would read a copy
    release_weight_copies(0);
    return {};
  }
  if (m_kernels.fp8 && u > 0 && u + 1 < m_units.size()) {  // a block: its float8 linears' weights
    WeightCopies copies(m_units[u].params.size());
    for (size_t which = 0; which < 4; ++which)
      copies[kParamOf[which]] = fp8_linear(u - 1, which).new_weight_copy(m_units[u].params[kParamOf[which]]);
    m_copy_flat[u] = at::Tensor();
    m_copy_views[u] = copies;
    return copies;
  }
  m_copy_flat[u] = at::empty(m_units[u].flat.sizes(), m_units[u].flat.options().dtype(m_kernels.compute));
  const auto views = views_of(m_copy_flat[u], unit_shapes(m_dims, u));
  m_copy_views[u] = WeightCopies(views.begin(), views.end());
  return m_copy_views[u];
}

int64_t LlamaModel::weight_copy_bytes(size_t u) const {
  if (u == 0 && !m_dims.tie_embeddings) return 0;
  if (m_kernels.fp8 && u > 0 && u + 1 < m_units.size()) {  // float8, both layouts
    int64_t n = 0;
    for (size_t which = 0; which < 4; ++which) n += m_units[u].params[kParamOf[which]].numel();
    return 2 * n;
  }
  return m_units[u].flat.numel() * static_cast<int64_t>(c10::elementSize(m_kernels.compute));
}

void LlamaModel::drop_weight_copies() {
  m_copy_flat.clear();
  m_copy_views.clear();
}

bool LlamaModel::has_weight_copies() const {
  for (const auto& unit : m_copy_views)
    for (const auto& c : unit)
      if (c.defined()) return true;
  return false;
}

at::Tensor LlamaModel::weight_copy(size_t unit, size_t param) const {
  if (!m_kernels.fused || unit >= m_copy_views.size() || param >= m_copy_views[unit].size()) return {};
  return m_copy_views[unit][param].half;
}

const WeightCopy* LlamaModel::fp8_weight_copy(size_t unit, size_t param) const {
  if (unit >= m_copy_views.size() || param >= m_copy_views[unit].size()) return nullptr;
  const WeightCopy& c = m_copy_views[unit][param];
  return c.fp8.defined() ? &c : nullptr;
}

void LlamaModel::release_weight_copies(size_t unit) const {
  if (unit >= m_copy_flat.size()) return;
  m_copy_flat[unit] = at::Tensor();
  m_copy_views[unit].clear();
}

at::Tensor LlamaModel::output_weight_copy() const {
  return m_dims.tie_embeddings ? weight_copy(0, 0) : weight_copy(m_units.size() - 1, 1);
}

void LlamaModel::release_output_weight_copy() const {
  release_weight_copies(m_dims.tie_embeddings ? 0 : m_units.size() - 1);
}

const at::Tensor& LlamaModel::output_weight(const std::vector<at::Tensor>& head_params) const {
  return m_dims.tie_embeddings ? m_units.front().params[0] : head_params[1];
}

at::Tensor LlamaModel::unit_forward(size_t unit, const at::Tensor& x, const std::vector<at::Tensor>& params) const {
  if (unit == 0) {
    if (!m_kernels.sparse_embedding_grad || !m_dims.tie_embeddings) return at::embedding(params[0], x);
    // Read once: the next batch's rows are not this one's.
    return fused::embedding_rows(params[0], x, std::exchange(m_lookup_rows, {}), std::exchange(m_lookup_compact, {}));
  }
  if (unit == m_units.size() - 1) {
    if (m_kernels.fused)
      return fused::linear(fused::rms_norm(x, params[0], m_kernels.compute, kNormEps), output_weight(params),
                           m_kernels.compute);
    return at::linear(rms_norm(x, params[0]), output_weight(params));
  }
  if (m_kernels.fused) {
    at::Tensor y = fused_block_forward(unit - 1, x, params);
    release_weight_copies(unit);  // read once: the checkpointed recompute casts again
    return y;
  }
  return block_forward(x, params);
}

at::Tensor LlamaModel::head_loss(const at::Tensor& x, const std::vector<at::Tensor>& params,
                                 const at::Tensor& targets) const {
  if (!m_kernels.fused) {
    const at::Tensor logits = at::linear(rms_norm(x, params[0]), output_weight(params));
    return at::cross_entropy_loss(logits.flatten(0, 1).to(at::kFloat), targets.flatten());
  }
  const at::Tensor n = fused::rms_norm(x, params[0], m_kernels.compute, kNormEps);
  at::Tensor loss = fused::linear_cross_entropy(n.flatten(0, 1), output_weight(params), targets.flatten(),
                                                m_kernels.compute, 0, output_weight_copy());
  release_output_weight_copy();
  release_weight_copies(m_units.size() - 1);
  return loss;
}

int64_t LlamaModel::parameter_count() const {
  int64_t n = 0;
  for (size_t u = 0; u < m_units.size(); ++u) n += numel_of(unit_shapes(m_dims, u));
  return n;
}

int64_t LlamaModel::matmul_parameter_count() const {
  return metrics::llama_matmul_parameters(m_dims.layers, m_dims.dim, m_dims.kv_dim(), m_dims.ffn, m_dims.vocab);
}

double LlamaModel::flops_per_token(int64_t seq_len) const {
  return metrics::palm_flops_per_token(matmul_parameter_count(), m_dims.layers, m_dims.dim, seq_len);
}

}  // namespace tunebench::engine
