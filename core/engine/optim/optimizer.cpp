#include "core/engine/optim/optimizer.h"

#include <cmath>

#include "core/engine/compat.h"
#include "core/engine/errors.h"

namespace tunebench::engine {

Optimizer::Optimizer(const config::TrialConfig& c, std::vector<at::Tensor> params)
    : m_kind(c.optimizer), m_lr(c.lr), m_weight_decay(c.weight_decay), m_params(std::move(params)) {
  at::NoGradGuard no_grad;
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  m_fused = c.fused_optimizer && m_kind == config::Optimizer::AdamW && !m_params.empty() && m_params[0].is_cuda();
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
  return m_fused ? "AdamW (fused)" : "AdamW (foreach)";
}

int64_t Optimizer::state_bytes() const {
  int64_t n = 0;
  for (const auto& t : m_exp_avg) n += t.numel() * static_cast<int64_t>(t.element_size());
  for (const auto& t : m_exp_avg_sq) n += t.numel() * static_cast<int64_t>(t.element_size());
  return n;
}

void Optimizer::step(const std::vector<at::Tensor>& grads, const at::Tensor& found_inf) {
  at::NoGradGuard no_grad;
  if (grads.size() != m_params.size())
    throw EngineError("internal", protocol::kExitInternal, "optimizer got a gradient list of the wrong length");
#if TORCH_VERSION_MAJOR >= 2 && defined(TUNEBENCH_WITH_CUDA)
  if (m_fused) {
    // The fused kernel does not count steps itself; it skips the update where found_inf != 0.
    at::_foreach_add_(m_state_steps, 1);
    at::_fused_adamw_(m_params, grads, m_exp_avg, m_exp_avg_sq, {}, m_state_steps, m_lr, m_beta1, m_beta2,
                      m_weight_decay, m_eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/{},
                      found_inf.defined() ? std::optional<at::Tensor>(found_inf) : std::nullopt);
    ++m_step;
    return;
  }
#endif
  // Foreach path: one host read decides a skipped fp16 step (the fused path needs none).
  if (found_inf.defined() && found_inf.item<float>() != 0.f) return;
  ++m_step;
  if (m_kind == config::Optimizer::Sgd) {
    if (m_weight_decay > 0) at::_foreach_mul_(m_params, 1.0 - m_lr * m_weight_decay);
    at::_foreach_add_(m_params, grads, -m_lr);
    return;
  }
  // AdamW (Loshchilov & Hutter), as torch.optim.AdamW: decoupled decay, bias-corrected moments.
  const double bias1 = 1.0 - std::pow(m_beta1, static_cast<double>(m_step));
  const double bias2 = 1.0 - std::pow(m_beta2, static_cast<double>(m_step));
  if (m_weight_decay > 0) at::_foreach_mul_(m_params, 1.0 - m_lr * m_weight_decay);
  at::_foreach_mul_(m_exp_avg, m_beta1);
  at::_foreach_add_(m_exp_avg, grads, 1.0 - m_beta1);
  at::_foreach_mul_(m_exp_avg_sq, m_beta2);
  at::_foreach_addcmul_(m_exp_avg_sq, grads, grads, 1.0 - m_beta2);
  std::vector<at::Tensor> denom = at::_foreach_sqrt(m_exp_avg_sq);
  at::_foreach_div_(denom, std::sqrt(bias2));
  at::_foreach_add_(denom, m_eps);
  at::_foreach_addcdiv_(m_params, m_exp_avg, denom, -m_lr / bias1);
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm) {
  at::NoGradGuard no_grad;
  if (grads.empty()) return {};
  const std::vector<at::Tensor> norms = at::_foreach_norm(grads, 2);
  at::Tensor total = at::stack(norms).to(at::kFloat).norm();
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

}  // namespace tunebench::engine
