// Activation checkpointing of one unit: keep only the unit's input, recompute its forward inside
// backward. libtorch has no torch.utils.checkpoint; this is the re-entrant variant built on a
// custom autograd Function (docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11": checkpointing).
//
// The recompute runs with the autocast state of the forward, so it computes the same values. The
// model has no dropout, so no RNG state needs restoring (a model that adds dropout must add it).
#pragma once

#include <functional>

#include <ATen/ATen.h>

namespace tunebench::engine {

using UnitBody = std::function<at::Tensor(const at::Tensor&)>;
// Called around the recompute (begin=true/false) so the timeline can show it.
using RecomputeObserver = std::function<void(bool begin)>;

// Runs `body(x)` without keeping its activations. `body` and `observer` must stay alive until
// backward has run (the trainer owns them for the whole step).
at::Tensor checkpointed(const at::Tensor& x, const UnitBody* body, const RecomputeObserver* observer);

}  // namespace tunebench::engine
