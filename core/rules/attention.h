// Which scaled-dot-product attention kernels a trial may run, and how the candidates are ranked:
// the rule the engine runs and the step-time prediction assumes. Neither the speeds nor where they
// come from are here: the engine times the candidates on the GPU that runs (before the first step),
// core/predict reads the catalogue's figures for the GPU it predicts.
//
// `auto` in 16 bits: cuDNN, flash and the memory-efficient kernel, each handed the head size
// rounded up to a multiple of 8 (the fused rotary kernel writes q, k and v padded; the eager block
// pads them) so that SDPA need not pad and copy itself, ranked by speed (rank_attention); fp32:
// the memory-efficient kernel (flash and cuDNN run 16 bits only); a forced kernel (the `attention`
// knob): that one alone; the CPU: the composite math, whatever is asked.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::rules {

enum class AttentionKernel { Math, Flash, Cudnn, Efficient };

struct AttentionChoice {
  AttentionKernel kernel = AttentionKernel::Math;
  int64_t head_dim = 0;         // dim / heads
  int64_t padded_head_dim = 0;  // what the kernel is handed (16-bit kernels: a multiple of 8)
  std::string why;              // "auto: cudnn for bf16 head size 128, measured 321 TFLOP/s" / "attention=flash (...)"
};

// The kernels the trial may run, unranked. More than one (auto in 16 bits on a GPU: cuDNN, flash,
// memory-efficient, in that order) means a choice by speed: rank_candidates. `cuda`: the trial
// runs on a GPU.
std::vector<AttentionChoice> attention_candidates(const config::TrialConfig& config, bool cuda);

// The decision rule on its own: kernels with their speed (TFLOP/s; 0: cannot run), fastest first;
// equal speeds keep the given order; those that cannot run are dropped.
std::vector<AttentionKernel> rank_attention(const std::vector<std::pair<AttentionKernel, double>>& speeds);

// `candidates` (attention_candidates) ranked by `tflops` (parallel to them; 0: cannot run),
// fastest first, each saying why: "auto: cudnn for bf16 head size 100, <how> 157 TFLOP/s, padded
// to 104". `how` says where the speed comes from ("measured" for the catalogue's figures, "timed
// here" for the engine's own timing). Empty when none can run.
std::vector<AttentionChoice> rank_candidates(const config::TrialConfig& config,
                                             const std::vector<AttentionChoice>& candidates,
                                             const std::vector<double>& tflops, const std::string& how);

// Useful FLOPs of one causal attention forward + backward over [batch, heads, seq, head_dim]
// queries: 4 B H T^2 hd / 2 forward (two products, half of them masked), backward 2.5 times that.
// The figure a kernel's TFLOP/s is counted with, by the engine's timing and by the probe that
// measured the catalogue's (lab/models_probe.py).
double attention_fwd_bwd_flops(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim);

const char* to_string(AttentionKernel kernel);

}  // namespace tunebench::rules
