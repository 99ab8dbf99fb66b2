// AdamW and SGD over lists of tensors, fused where the libtorch has a fused kernel (2.x with
// CUDA: at::_fused_adamw_), multi-tensor foreach ops otherwise. The optimizer sees exactly the
// tensors it is given: under FSDP that is the rank's shard, so optimizer state is sharded too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"
#include "core/engine/optim/weight_copy.h"

namespace tunebench::engine {

class Optimizer {
 public:
  // With `compile` fused on a GPU, AdamW of fp32 parameters runs the project's multi-tensor kernel
  // (kernels/fused_kernels.h: adamw_step, one pass over each tensor with 16-byte accesses) once it
  // has matched at::_fused_adamw_ on test tensors in this process; otherwise, and with
  // `torch_adamw` (TUNEBENCH_ADAMW=torch, core/engine/switches.h), PyTorch's. `fallback_reason()`
  // says why a requested kernel was not used.
  Optimizer(const config::TrialConfig& config, std::vector<at::Tensor> params, bool torch_adamw = false);

  // One update. `grads[i]` belongs to `params[i]`. `found_inf` (fp16 loss scaling): a float
  // tensor [1] on the device; when non-zero the update is skipped (inside the fused kernel, or
  // after one host read on the foreach path).
  // `copies` (the project's kernel only): per parameter a WeightCopy, or an undefined one, that
  // receives the updated parameter in the same pass. Returns whether they were written.
  bool step(const std::vector<at::Tensor>& grads, const at::Tensor& found_inf = {}, const WeightCopies& copies = {});
  // The same update group by group (`group_sizes` parameters each, in order), the project's kernel
  // writing the copies `copies_for(group)` returns; each group's gradients are released from
  // `grads` once its update is queued, so a caller that holds no other reference frees them as it
  // goes. Without the project's kernel: step(grads), no copies. Returns whether copies were written.
  bool step_in_groups(std::vector<at::Tensor>& grads, const std::vector<size_t>& group_sizes,
                      const std::function<WeightCopies(size_t)>& copies_for);

  // One update in pieces, for an update that runs while the backward still computes other
  // gradients (optim/optimizer_overlap.h): begin_step() once, then update() for each run of
  // parameters `first` .. `first + n - 1` as its gradients (`grads`, n of them) are complete, each
  // parameter once, on the current stream. Each piece computes exactly what step() computes for
  // those parameters. `copies`: as step()'s, for the project's kernel. Returns whether they were
  // written. No loss scaling (found_inf needs every gradient first).
  void begin_step();
  bool update(size_t first, size_t n, const std::vector<at::Tensor>& grads, const WeightCopies& copies = {});

  bool fused() const { return m_fused; }
  bool own_kernel() const { return m_own_kernel; }
  const std::string& fallback_reason() const { return m_fallback_reason; }
  std::string describe()
      const;  // "AdamW (fused)", "AdamW (fused, Tunebench kernel)", "AdamW (foreach)", "SGD (foreach)"
  int64_t state_bytes() const;
  // The state tensors (moments, step counts), for the memory categories (memory_sampler.h).
  std::vector<at::Tensor> state_tensors() const;
  const std::vector<at::Tensor>& params() const { return m_params; }

 private:
  // The foreach (multi-tensor, unfused) update of these parameters with the step count m_step.
  void foreach_update(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                      const std::vector<at::Tensor>& exp_avg, const std::vector<at::Tensor>& exp_avg_sq);

  config::Optimizer m_kind;
  double m_lr, m_weight_decay;
  double m_beta1 = 0.9, m_beta2 = 0.999, m_eps = 1e-8;
  bool m_fused = false;
  bool m_own_kernel = false;
  std::string m_fallback_reason;
  at::Tensor m_step_count;  // own kernel: the step as a device float (a CUDA graph replays its increment)
  int64_t m_step = 0;
  std::vector<at::Tensor> m_params;
  std::vector<at::Tensor> m_exp_avg, m_exp_avg_sq, m_state_steps;
};

// Scales gradients so that their global L2 norm is at most `max_norm` (no host synchronisation:
// the clip coefficient stays on the device). Returns the norm before clipping, on the device.
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm);

// Dynamic loss scaling for fp16 autocast (Python's GradScaler defaults: init 2^16, growth 2 every
// 2000 good steps, backoff 0.5).
class LossScaler {
 public:
  explicit LossScaler(c10::Device device);
  at::Tensor scale(const at::Tensor& loss) const { return loss * m_scale; }
  // Unscales grads in place and returns found_inf (float [1], device); then update().
  at::Tensor unscale(const std::vector<at::Tensor>& grads);
  void update(const at::Tensor& found_inf);
  double current_scale() const;

 private:
  at::Tensor m_scale, m_growth_tracker;
};

}  // namespace tunebench::engine
