#include "core/engine/optim/optimizer_overlap.h"

#include "core/engine/errors.h"
#include "core/engine/grad_hooks.h"
#include "core/engine/optim/optimizer.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace tunebench::engine {

#ifdef TUNEBENCH_WITH_CUDA
struct OptimizerOverlap::Impl {
  explicit Impl(size_t units) : side(at::cuda::getStreamFromPool()), ready(units) {}
  at::cuda::CUDAStream side;
  std::vector<at::cuda::CUDAEvent> ready;  // per unit: its gradients are computed (backward's stream)
  at::cuda::CUDAEvent done;               // the updates queued so far have run (side stream)
};
#else
struct OptimizerOverlap::Impl {};
#endif

OptimizerOverlap::OptimizerOverlap(Optimizer& optimizer, std::vector<std::vector<at::Tensor>> unit_params,
                                   std::function<WeightCopies(size_t)> copies_for, bool cuda)
    : m_optimizer(optimizer), m_units(std::move(unit_params)), m_copies_for(std::move(copies_for)) {
  size_t first = 0;
  for (const auto& u : m_units) {
    m_first.push_back(first);
    first += u.size();
  }
  if (first != m_optimizer.params().size())
    throw EngineError("internal", protocol::kExitInternal, "optimizer_overlap: the units do not cover the parameters");
  m_pending.assign(m_units.size(), 0);
  m_done.assign(m_units.size(), true);
#ifdef TUNEBENCH_WITH_CUDA
  if (cuda) m_impl = std::make_unique<Impl>(m_units.size());
#else
  if (cuda) throw EngineError("internal", protocol::kExitInternal, "optimizer_overlap: a CUDA device in a CPU build");
#endif
  for (size_t u = 0; u < m_units.size(); ++u)
    for (const auto& p : m_units[u]) m_accumulators.push_back(on_gradient_accumulated(p, [this, u] { on_gradient(u); }));
}

OptimizerOverlap::~OptimizerOverlap() = default;

void OptimizerOverlap::arm() {
  m_optimizer.begin_step();  // on the current stream, before any unit's update is queued
  for (size_t u = 0; u < m_units.size(); ++u) {
    m_pending[u] = m_units[u].size();
    m_done[u] = false;
  }
  m_copies_written = true;
  m_in_backward = 0;
  m_armed = true;
}

// On the autograd engine's thread, while the training thread waits in backward().
void OptimizerOverlap::on_gradient(size_t unit) {
  if (!m_armed || m_done[unit] || m_pending[unit] == 0) return;
  if (--m_pending[unit] > 0) return;
  update(unit);
  ++m_in_backward;
}

void OptimizerOverlap::update(size_t unit) {
  std::vector<at::Tensor> grads;
  for (const auto& p : m_units[unit]) grads.push_back(p.grad().defined() ? p.grad() : at::zeros_like(p));
  // Allocated on the backward's stream (the next forward reads them there).
  WeightCopies copies = m_copies_for ? m_copies_for(unit) : WeightCopies{};
  bool wrote = false;
#ifdef TUNEBENCH_WITH_CUDA
  if (m_impl) {
    const at::cuda::CUDAStream main = at::cuda::getCurrentCUDAStream();
    m_impl->ready[unit].record(main);
    m_impl->ready[unit].block(m_impl->side);
    {
      c10::cuda::CUDAStreamGuard on_side(m_impl->side);
      wrote = m_optimizer.update(m_first[unit], grads.size(), grads, copies);
    }
    // The allocator must not reuse these blocks on the backward's stream before the update read
    // (gradients) or wrote (copies) them.
    for (auto& g : grads) g.record_stream(m_impl->side);
    for (auto& c : copies)
      for (at::Tensor* t : {&c.half, &c.fp8, &c.fp8_t})
        if (t->defined()) t->record_stream(m_impl->side);
  } else
#endif
  {
    wrote = m_optimizer.update(m_first[unit], grads.size(), grads, copies);
  }
  if (!copies.empty() && !wrote) m_copies_written = false;
  for (auto& p : m_units[unit]) p.mutable_grad().reset();  // zero_grad(set_to_none=True), unit by unit
  m_done[unit] = true;
}

bool OptimizerOverlap::finish() {
  if (!m_armed) throw EngineError("internal", protocol::kExitInternal, "optimizer_overlap: finish() without arm()");
  for (size_t u = 0; u < m_units.size(); ++u)
    if (!m_done[u]) update(u);
#ifdef TUNEBENCH_WITH_CUDA
  if (m_impl) {
    m_impl->done.record(m_impl->side);
    m_impl->done.block(at::cuda::getCurrentCUDAStream());
  }
#endif
  m_armed = false;
  return m_copies_written;
}

}  // namespace tunebench::engine
