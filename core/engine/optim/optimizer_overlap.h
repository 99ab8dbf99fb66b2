// The optimizer under the backward (knob `optimizer_overlap`, one rank): each unit's update is
// queued as soon as the backward has accumulated the unit's last gradient, instead of after the
// whole backward, and the unit's gradients are released with it. On a GPU it runs on a second
// stream, after an event that orders it behind that unit's gradient kernels; what does not fit
// under the backward is what the optimizer phase still shows. On the CPU the updates run in place,
// in the same order. Measured on an H200 at 7B (docs/history/benchmarks-2026-12.md, "Optimizer in
// backward"): the AdamW kernels interleave with the backward's instead of running beside them, so the step keeps
// its length, and the peak is 3 GiB lower (the fp32 gradients never all exist at once).
//
// Correct because a unit's parameters (and their 16-bit copies) are read by nothing in the backward
// after the unit's last gradient is accumulated: the update reads only that unit's gradients, which
// it then releases (recorded on the second stream, so the allocator does not hand their memory to
// the backward before the update has read them). Gradient clipping and fp16 loss scaling need every
// gradient before the first update; DDP and FSDP need the reduced ones: config::validate refuses
// those combinations, as it does CUDA graphs.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "core/engine/optim/weight_copy.h"

namespace tunebench::engine {

class Optimizer;

class OptimizerOverlap {
 public:
  // `unit_params`: each unit's parameters in the order `optimizer` holds them (unit 0 first, then
  // contiguous). `copies_for(u)`: the weight copies the update of unit u writes (empty function:
  // none). `cuda`: run the updates on a second stream.
  OptimizerOverlap(Optimizer& optimizer, std::vector<std::vector<at::Tensor>> unit_params,
                   std::function<WeightCopies(size_t)> copies_for, bool cuda);
  ~OptimizerOverlap();
  OptimizerOverlap(const OptimizerOverlap&) = delete;
  OptimizerOverlap& operator=(const OptimizerOverlap&) = delete;

  // Before the backward whose gradients the step applies (the last micro-step's): starts the
  // optimizer step, and the units' updates follow their gradients from here on.
  void arm();
  // After that backward: updates the units whose gradients did not all come (a parameter outside
  // the loss counts as a zero gradient, as in the serial step), makes the current stream wait for
  // the updates, and disarms. Returns whether every update wrote its copies.
  bool finish();

  // Units updated during the last backward (the rest were left to finish()).
  size_t updated_in_backward() const { return m_in_backward; }

 private:
  void on_gradient(size_t unit);
  void update(size_t unit);

  struct Impl;  // the second stream and its events (CUDA builds only)
  Optimizer& m_optimizer;
  std::vector<std::vector<at::Tensor>> m_units;
  std::vector<size_t> m_first;  // each unit's first index in the optimizer's parameters
  std::function<WeightCopies(size_t)> m_copies_for;
  std::vector<size_t> m_pending;
  std::vector<bool> m_done;
  std::vector<std::shared_ptr<void>> m_accumulators;  // keep the gradient accumulators (and hooks) alive
  std::unique_ptr<Impl> m_impl;
  bool m_armed = false;
  bool m_copies_written = true;
  size_t m_in_backward = 0;
};

}  // namespace tunebench::engine
