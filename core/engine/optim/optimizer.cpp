#include "core/engine/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>

#include "core/engine/compat.h"
#include "core/engine/errors.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "core/engine/kernels/fused_kernels.h"
#endif

namespace tunebench::engine {

namespace {

#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
// One update of the project's kernel over `params` (fp32, contiguous, on the current stream): the
// parameters with a float8 copy through adamw_fp8_step, the others (with or without a 16-bit copy)
// through adamw_step. Everything is checked before the first launch: false leaves every tensor as
// it was.
bool own_adamw(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
               const std::vector<at::Tensor>& exp_avg, const std::vector<at::Tensor>& exp_avg_sq,
               const at::Tensor& step, double lr, double beta1, double beta2, double weight_decay, double eps,
               const WeightCopies& copies = {}) {
  auto copy_type = kernels::ElemType::F32;  // none
  for (const auto& c : copies) {
    if (!c.half.defined()) continue;
    const auto t = c.half.scalar_type() == at::kBFloat16 ? kernels::ElemType::BF16
                   : c.half.scalar_type() == at::kHalf   ? kernels::ElemType::F16
                                                         : kernels::ElemType::F32;
    if (t == kernels::ElemType::F32 || (copy_type != kernels::ElemType::F32 && t != copy_type)) return false;
    copy_type = t;
  }
  std::vector<kernels::AdamwTensor> table;
  std::vector<kernels::AdamwFp8Tensor> fp8_table;
  std::vector<at::Tensor> keep;  // contiguous copies of strided gradients, alive until the launch
  table.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    if (!p.is_contiguous() || p.scalar_type() != at::kFloat || !exp_avg[i].is_contiguous() ||
        !exp_avg_sq[i].is_contiguous())
      return false;
    const WeightCopy none;
    const WeightCopy& c = i < copies.size() ? copies[i] : none;
    // A bf16 gradient (rules::half_weight_grads) is read as it is, except by the float8 kernel.
    const bool half = grads[i].scalar_type() == at::kBFloat16 && !c.fp8.defined();
    at::Tensor g = grads[i].scalar_type() == at::kFloat || half ? grads[i].contiguous()
                                                                : grads[i].to(at::kFloat).contiguous();
    if (g.numel() != p.numel()) return false;
    keep.push_back(g);
    if (c.fp8.defined()) {
      if (p.dim() != 2 || !c.fp8.is_contiguous() || !c.fp8_t.defined() || !c.fp8_t.is_contiguous() ||
          !c.fp8.sizes().equals(p.sizes()) || c.fp8_t.size(0) != p.size(1) || c.fp8_t.size(1) != p.size(0) ||
          c.fp8.element_size() != 1 || c.fp8_t.element_size() != 1)
        return false;
      fp8_table.push_back({p.data_ptr<float>(), g.data_ptr<float>(), exp_avg[i].data_ptr<float>(),
                           exp_avg_sq[i].data_ptr<float>(), p.size(0), p.size(1), c.fp8.data_ptr(), c.fp8_t.data_ptr(),
                           c.amax_history, c.amax_current, c.inv_scale});
      continue;
    }
    void* copy = nullptr;
    if (c.half.defined()) {
      if (!c.half.is_contiguous() || c.half.numel() != p.numel()) return false;
      copy = c.half.data_ptr();
    }
    table.push_back({p.data_ptr<float>(), g.data_ptr(), exp_avg[i].data_ptr<float>(), exp_avg_sq[i].data_ptr<float>(),
                     p.numel(), copy, half});
  }
  const auto stream = at::cuda::getCurrentCUDAStream();
  const auto f = [](double v) { return static_cast<float>(v); };
  if (!fp8_table.empty() && !kernels::adamw_fp8_step(fp8_table.data(), static_cast<int>(fp8_table.size()),
                                                     step.data_ptr<float>(), f(lr), f(beta1), f(beta2),
                                                     f(weight_decay), f(eps), stream))
    return false;  // its checks come before its launches
  if (!fp8_table.empty()) C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (!kernels::adamw_step(table.data(), static_cast<int>(table.size()), step.data_ptr<float>(), f(lr), f(beta1),
                           f(beta2), f(weight_decay), f(eps), copy_type, stream)) {
    if (fp8_table.empty()) return false;
    throw EngineError("internal", protocol::kExitInternal, "the AdamW kernel refused a group after updating part of it");
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

// The kernel against at::_fused_adamw_ on tensors of this device, two steps: lengths that take
// the 16-byte path over several chunks, the element-wise path, and a few elements, the last two
// also with a bf16 gradient (given to PyTorch's as its fp32 value).
bool own_adamw_agrees(c10::Device device, double lr, double wd, std::string* why) {
  const auto opts = at::TensorOptions().device(device).dtype(at::kFloat);
  std::vector<at::Tensor> p1, p2, g, g2, m1, m2, v1, v2, steps;
  const int64_t sizes[] = {int64_t{3} * (int64_t{1} << 16) + 4, int64_t{4099}, int64_t{8}, int64_t{4100}, int64_t{9}};
  for (size_t k = 0; k < std::size(sizes); ++k) {
    const int64_t n = sizes[k];
    p1.push_back(at::randn({n}, opts));
    p2.push_back(p1.back().clone());
    g.push_back(k >= 3 ? at::randn({n}, opts).to(at::kBFloat16) : at::randn({n}, opts));
    g2.push_back(g.back().to(at::kFloat));
    m1.push_back(at::zeros({n}, opts));
    m2.push_back(at::zeros({n}, opts));
    v1.push_back(at::zeros({n}, opts));
    v2.push_back(at::zeros({n}, opts));
    steps.push_back(at::zeros({}, opts));
  }
  at::Tensor step = at::zeros({1}, opts);
  for (int k = 0; k < 2; ++k) {
    step.add_(1);
    if (!own_adamw(p1, g, m1, v1, step, lr, 0.9, 0.999, wd, 1e-8)) {
      *why = "the kernel does not take these tensors";
      return false;
    }
    at::_foreach_add_(steps, 1);
    at::_fused_adamw_(p2, g2, m2, v2, {}, steps, lr, 0.9, 0.999, wd, 1e-8, false, false, {}, {});
  }
  double worst = 0;
  for (size_t i = 0; i < p1.size(); ++i) {
    const double diff = (p1[i] - p2[i]).abs().max().item<double>();
    const double scale = p2[i].abs().max().item<double>() + 1e-12;
    worst = std::max(worst, diff / scale);
  }
  if (!(worst < 1e-5)) {
    *why = "it differs from at::_fused_adamw_ by " + std::to_string(worst) + " (relative)";
    return false;
  }
  return true;
}
#endif

}  // namespace

Optimizer::Optimizer(const config::TrialConfig& c, std::vector<at::Tensor> params, bool torch_adamw)
    : m_kind(c.optimizer), m_lr(c.lr), m_weight_decay(c.weight_decay), m_params(std::move(params)) {
  at::NoGradGuard no_grad;
  (void)torch_adamw;  // only where the project's kernel can run (CUDA, libtorch 2.x)
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  m_fused = c.fused_optimizer && m_kind == config::Optimizer::AdamW && !m_params.empty() && m_params[0].is_cuda();
  // The project's kernel is part of `compile fused`: eager trials keep PyTorch's, as the reference.
  // fp16's loss scaling (found_inf) and 16-bit parameters stay with PyTorch's kernel.
  if (m_fused && config::uses_fused_kernels(c.compile) && c.amp != config::Amp::Fp16 &&
      m_params[0].scalar_type() == at::kFloat) {
    if (torch_adamw) {
      m_fallback_reason = "TUNEBENCH_ADAMW=torch";
    } else if (!std::all_of(m_params.begin(), m_params.end(),
                            [](const at::Tensor& p) { return p.is_contiguous() && p.scalar_type() == at::kFloat; })) {
      m_fallback_reason = "a parameter is not a contiguous fp32 tensor";
    } else if (own_adamw_agrees(m_params[0].device(), m_lr, m_weight_decay, &m_fallback_reason)) {
      m_own_kernel = true;
      m_step_count = at::zeros({1}, m_params[0].options().dtype(at::kFloat));
    }
  }
#endif
  if (m_kind == config::Optimizer::AdamW) {
    for (const auto& p : m_params) {
      m_exp_avg.push_back(at::zeros_like(p, at::MemoryFormat::Contiguous));
      m_exp_avg_sq.push_back(at::zeros_like(p, at::MemoryFormat::Contiguous));
      if (m_fused) m_state_steps.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    }
  }
}

std::string Optimizer::describe() const {
  if (m_kind == config::Optimizer::Sgd) return "SGD (foreach)";
  if (m_own_kernel) return "AdamW (fused, Tunebench kernel)";
  return m_fused ? "AdamW (fused)" : "AdamW (foreach)";
}

int64_t Optimizer::state_bytes() const {
  int64_t n = 0;
  for (const auto& t : m_exp_avg) n += t.numel() * static_cast<int64_t>(t.element_size());
  for (const auto& t : m_exp_avg_sq) n += t.numel() * static_cast<int64_t>(t.element_size());
  return n;
}

bool Optimizer::step(const std::vector<at::Tensor>& grads, const at::Tensor& found_inf, const WeightCopies& copies) {
  at::NoGradGuard no_grad;
  (void)copies;  // only the project's kernel (CUDA, libtorch 2.x) writes them
  if (grads.size() != m_params.size())
    throw EngineError("internal", protocol::kExitInternal, "optimizer got a gradient list of the wrong length");
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  if (m_own_kernel && !found_inf.defined()) {
    m_step_count.add_(1);
    if (own_adamw(m_params, grads, m_exp_avg, m_exp_avg_sq, m_step_count, m_lr, m_beta1, m_beta2, m_weight_decay, m_eps,
                  copies)) {
      ++m_step;
      return !copies.empty();
    }
    m_step_count.sub_(1);
    m_own_kernel = false;  // a parameter it cannot take: PyTorch's from here on, its step counts kept
    m_fallback_reason = "a parameter is not a contiguous fp32 tensor";
    if (!m_state_steps.empty()) at::_foreach_add_(m_state_steps, static_cast<double>(m_step));
  }
  if (m_fused) {
    // The fused kernel does not count steps itself; it skips the update where found_inf != 0.
    at::_foreach_add_(m_state_steps, 1);
    at::_fused_adamw_(m_params, grads, m_exp_avg, m_exp_avg_sq, {}, m_state_steps, m_lr, m_beta1, m_beta2,
                      m_weight_decay, m_eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/{},
                      found_inf.defined() ? std::optional<at::Tensor>(found_inf) : std::nullopt);
    ++m_step;
    return false;
  }
#endif
  // Foreach path: one host read decides a skipped fp16 step (the fused path needs none).
  if (found_inf.defined() && found_inf.item<float>() != 0.f) return false;
  ++m_step;
  foreach_update(m_params, grads, m_exp_avg, m_exp_avg_sq);
  return false;
}

void Optimizer::foreach_update(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                               const std::vector<at::Tensor>& exp_avg, const std::vector<at::Tensor>& exp_avg_sq) {
  if (m_kind == config::Optimizer::Sgd) {
    if (m_weight_decay > 0) at::_foreach_mul_(params, 1.0 - m_lr * m_weight_decay);
    at::_foreach_add_(params, grads, -m_lr);
    return;
  }
  // AdamW (Loshchilov & Hutter), as torch.optim.AdamW: decoupled decay, bias-corrected moments.
  const double bias1 = 1.0 - std::pow(m_beta1, static_cast<double>(m_step));
  const double bias2 = 1.0 - std::pow(m_beta2, static_cast<double>(m_step));
  if (m_weight_decay > 0) at::_foreach_mul_(params, 1.0 - m_lr * m_weight_decay);
  at::_foreach_mul_(exp_avg, m_beta1);
  at::_foreach_add_(exp_avg, grads, 1.0 - m_beta1);
  at::_foreach_mul_(exp_avg_sq, m_beta2);
  at::_foreach_addcmul_(exp_avg_sq, grads, grads, 1.0 - m_beta2);
  std::vector<at::Tensor> denom = at::_foreach_sqrt(exp_avg_sq);
  at::_foreach_div_(denom, std::sqrt(bias2));
  at::_foreach_add_(denom, m_eps);
  at::_foreach_addcdiv_(params, exp_avg, denom, -m_lr / bias1);
}

void Optimizer::begin_step() {
  at::NoGradGuard no_grad;
  ++m_step;
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  if (m_own_kernel) m_step_count.add_(1);
  else if (m_fused) at::_foreach_add_(m_state_steps, 1);
#endif
}

bool Optimizer::update(size_t first, size_t n, const std::vector<at::Tensor>& grads, const WeightCopies& copies) {
  at::NoGradGuard no_grad;
  (void)copies;  // only the project's kernel (CUDA, libtorch 2.x) writes them
  if (first + n > m_params.size() || grads.size() != n)
    throw EngineError("internal", protocol::kExitInternal, "optimizer update outside its parameters");
  const auto slice = [first, n](const std::vector<at::Tensor>& v) {
    if (v.empty()) return v;  // SGD has no state
    return std::vector<at::Tensor>(v.begin() + static_cast<std::ptrdiff_t>(first),
                                   v.begin() + static_cast<std::ptrdiff_t>(first + n));
  };
  const std::vector<at::Tensor> params = slice(m_params);
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  if (m_own_kernel) {
    if (!own_adamw(params, grads, slice(m_exp_avg), slice(m_exp_avg_sq), m_step_count, m_lr, m_beta1, m_beta2,
                   m_weight_decay, m_eps, copies))
      throw EngineError("internal", protocol::kExitInternal, "the AdamW kernel refused a parameter group");
    return !copies.empty();
  }
  if (m_fused) {
    at::_fused_adamw_(params, grads, slice(m_exp_avg), slice(m_exp_avg_sq), {}, slice(m_state_steps), m_lr, m_beta1,
                      m_beta2, m_weight_decay, m_eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/{},
                      /*found_inf=*/{});
    return false;
  }
#endif
  foreach_update(params, grads, slice(m_exp_avg), slice(m_exp_avg_sq));
  return false;
}

bool Optimizer::step_in_groups(std::vector<at::Tensor>& grads, const std::vector<size_t>& group_sizes,
                               const std::function<WeightCopies(size_t)>& copies_for) {
  if (!m_own_kernel) return step(grads);
  size_t total = 0;
  for (size_t n : group_sizes) total += n;
  if (total != m_params.size() || grads.size() != m_params.size())
    throw EngineError("internal", protocol::kExitInternal, "optimizer groups do not cover the parameters");
  begin_step();
  size_t first = 0;
  for (size_t group = 0; group < group_sizes.size(); ++group) {
    const size_t n = group_sizes[group];
    update(first, n,
           std::vector<at::Tensor>(grads.begin() + static_cast<std::ptrdiff_t>(first),
                                   grads.begin() + static_cast<std::ptrdiff_t>(first + n)),
           copies_for(group));
    for (size_t i = first; i < first + n; ++i) grads[i] = at::Tensor();
    first += n;
  }
  return true;
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm) {
  at::NoGradGuard no_grad;
  if (grads.empty()) return {};
  std::vector<at::Tensor> norms = at::_foreach_norm(grads, 2);
  for (auto& n : norms) n = n.to(at::kFloat);  // bf16 gradients (rules::half_weight_grads) give bf16 norms
  at::Tensor total = at::stack(norms).norm();
  const at::Tensor coef = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (const auto& g : grads) g.mul_(coef.to(g.scalar_type()));
  return total;
}

LossScaler::LossScaler(c10::Device device) {
  const auto opts = at::TensorOptions().device(device);
  m_scale = at::full({1}, 65536.0, opts.dtype(at::kFloat));
  m_growth_tracker = at::zeros({1}, opts.dtype(at::kInt));
}

at::Tensor LossScaler::unscale(const std::vector<at::Tensor>& grads) {
  at::NoGradGuard no_grad;
  at::Tensor found_inf = at::zeros({1}, m_scale.options());
  const at::Tensor inv = m_scale.reciprocal();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv);
  return found_inf;
}

void LossScaler::update(const at::Tensor& found_inf) {
  at::_amp_update_scale_(m_scale, m_growth_tracker, found_inf, 2.0, 0.5, 2000);
}

double LossScaler::current_scale() const { return m_scale.item<double>(); }

std::vector<at::Tensor> Optimizer::state_tensors() const {
  std::vector<at::Tensor> out;
  for (const auto* list : {&m_exp_avg, &m_exp_avg_sq, &m_state_steps}) out.insert(out.end(), list->begin(), list->end());
  out.push_back(m_step_count);
  return out;
}

}  // namespace tunebench::engine
