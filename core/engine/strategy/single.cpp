#include "core/engine/model/llama.h"
#include "core/engine/strategy/strategy.h"

namespace tunebench::engine {

const std::vector<at::Tensor>& SingleStrategy::unit_params(size_t unit) { return m_model.units()[unit].params; }

std::vector<at::Tensor> SingleStrategy::optimizer_params() { return m_model.parameters(); }

std::vector<at::Tensor> SingleStrategy::optimizer_grads() {
  std::vector<at::Tensor> grads;
  const std::vector<at::Tensor> half = m_model.take_half_weight_grads();  // ModelKernels::half_weight_grads
  const std::vector<at::Tensor> params = m_model.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    // A parameter that took no part in the loss has no gradient; treat it as zero.
    grads.push_back(p.grad().defined() ? p.grad() : half[i].defined() ? half[i] : at::zeros_like(p));
  }
  return grads;
}

void SingleStrategy::after_optimizer() {
  if (m_keep_grads) {
    at::NoGradGuard no_grad;
    for (auto& p : m_model.parameters())
      if (p.grad().defined()) p.mutable_grad().zero_();
    return;
  }
  for (auto& p : m_model.parameters()) p.mutable_grad().reset();
  m_model.take_half_weight_grads();
}

}  // namespace tunebench::engine
