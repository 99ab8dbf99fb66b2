// Which scaled-dot-product attention kernel a trial runs, and how fast that kernel is at a head
// size relative to head size 128. One rule for the engine (which sets PyTorch's backend switches
// from it and records what ran) and for the step-time prediction.
//
// `auto` picks, on a GPU, the kernel measured fastest at the trial's head size and grouping (the
// catalogue's attention_tflops_* constants, docs/BENCHMARKS.md "SDPA kernels and GEMMs by shape"):
// in 16 bits cuDNN, flash or memory-efficient, each handed the head size rounded up to a multiple
// of 8 (the fused rotary kernel writes q, k and v padded; the eager block pads them), so that SDPA
// need not pad and copy itself; fp32: the memory-efficient kernel; on the CPU the composite math.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"
#include "core/hardware/hardware.h"

namespace tunebench::predict {

enum class AttentionKernel { Math, Flash, Cudnn, Efficient };

struct AttentionChoice {
  AttentionKernel kernel = AttentionKernel::Math;
  int64_t head_dim = 0;         // dim / heads
  int64_t padded_head_dim = 0;  // what the kernel is handed (16-bit kernels: a multiple of 8)
  std::string why;              // "auto: cuDNN for bf16 head size 128" / "forced by attention=flash"
};

// `cuda`: the trial runs on a GPU (false: the CPU, which runs math whatever is asked). The first
// of attention_candidates.
AttentionChoice attention_choice(const config::TrialConfig& config, bool cuda,
                                 const hardware::Catalogue& cat = hardware::catalogue());

// The kernels a trial may run, fastest first: `auto` in 16 bits ranks cuDNN, flash and the
// memory-efficient kernel, each handed the head size rounded up to a multiple of 8, by their
// measured speed at that size (attention_tflops); a kernel without a measurement there (cuDNN and
// flash in fp32, the memory-efficient kernel with grouped-query attention) is left out. fp32: the
// memory-efficient kernel; a forced kernel: that one alone; the CPU: math. The engine takes the
// first that PyTorch can run on the trial's tensors.
std::vector<AttentionChoice> attention_candidates(const config::TrialConfig& config, bool cuda,
                                                  const hardware::Catalogue& cat = hardware::catalogue());

// The decision rule on its own: kernels with their measured TFLOP/s (0: cannot run), fastest first;
// equal speeds keep the given order; those that cannot run are dropped.
std::vector<AttentionKernel> rank_attention(const std::vector<std::pair<AttentionKernel, double>>& measured);

// Measured forward + backward TFLOP/s (useful FLOPs, causal) of `kernel` at `head_dim`, handed the
// size rounded up to a multiple of 8: the catalogue's attention_tflops_<kernel>_<mha|gqa>_hd<N>
// (lab/fit_models_probe.py from scripts/gpu-bench.sh models-probe), interpolated linearly
// between measured sizes and held flat beyond them. 0 where the kernel has no measurement for the
// grouping (it could not run there). Math: attention_math_relative x cuDNN's at head size 128.
double attention_tflops(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat);

// attention_tflops against cuDNN's at head size 128 without grouping: the factor the step model
// applies to the calibrated attention efficiency (which is cuDNN's at 128).
double attention_speed(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat);

const char* to_string(AttentionKernel kernel);

}  // namespace tunebench::predict
