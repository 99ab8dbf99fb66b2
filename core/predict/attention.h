// The attention kernel a prediction assumes, and how fast that kernel is at a head size relative to
// head size 128.
//
// Which kernels are candidates and how they are ranked is core/rules/attention.h, the rule the
// engine runs too. The engine ranks `auto`'s candidates by timing them on the GPU that runs; a
// prediction ranks them by the catalogue's attention_tflops_* figures (docs/BENCHMARKS.md, "SDPA
// kernels and GEMMs by shape": measured on the project's H200), the speeds it prices every kernel
// with. On a GPU whose own timing ranks them otherwise the prediction names another kernel than
// the one the trial's log and model event say ran.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/trial_config.h"
#include "core/hardware/hardware.h"
#include "core/rules/attention.h"

namespace tunebench::predict {

using rules::AttentionChoice;
using rules::AttentionKernel;

// rules::attention_candidates, `auto`'s ranked by the catalogue's speeds at the head size and
// grouping (attention_tflops; "measured N TFLOP/s"); a kernel without a figure there (cuDNN and
// flash in fp32, the memory-efficient kernel with grouped-query attention) is left out, and with
// none at all flash is assumed. `cuda`: the trial runs on a GPU.
std::vector<AttentionChoice> attention_candidates(const config::TrialConfig& config, bool cuda,
                                                  const hardware::Catalogue& cat = hardware::catalogue());
// The first of attention_candidates: the kernel the step model prices.
AttentionChoice attention_choice(const config::TrialConfig& config, bool cuda,
                                 const hardware::Catalogue& cat = hardware::catalogue());

// Measured forward + backward TFLOP/s (useful FLOPs, causal: rules::attention_fwd_bwd_flops) of
// `kernel` at `head_dim`, handed the size rounded up to a multiple of 8: the catalogue's
// attention_tflops_<kernel>_<mha|gqa>_hd<N> (lab/fit_models_probe.py from scripts/gpu-bench.sh
// models-probe), interpolated linearly between measured sizes and held flat beyond them. 0 where
// the kernel has no measurement for the grouping (it could not run there). Math:
// attention_math_relative x cuDNN's at head size 128.
double attention_tflops(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat);

// attention_tflops against cuDNN's at head size 128 without grouping: the factor the step model
// applies to the calibrated attention efficiency (which is cuDNN's at 128).
double attention_speed(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat);

}  // namespace tunebench::predict
