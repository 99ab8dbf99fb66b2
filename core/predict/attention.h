// Which scaled-dot-product attention kernel a trial runs, and how fast that kernel is at a head
// size relative to head size 128. One rule for the engine (which sets PyTorch's backend switches
// from it and records what ran) and for the step-time prediction.
//
// `auto` picks, on a GPU: cuDNN's fused attention for 16-bit head sizes that are multiples of 8 up
// to 128 (its backward takes no more in cuDNN 9.19, the wheel's); FlashAttention-2 for the other
// 16-bit head sizes up to 256 (a head size that is no multiple of 8 is padded to one: flash needs
// it, and the fused rotary kernel writes q, k and v padded so that SDPA need not copy them); the
// memory-efficient kernel for fp32; on the CPU the composite math.
#pragma once

#include <cstdint>
#include <string>

#include "core/config/trial_config.h"
#include "core/hardware/hardware.h"

namespace tunebench::predict {

enum class AttentionKernel { Math, Flash, Cudnn, Efficient };

struct AttentionChoice {
  AttentionKernel kernel = AttentionKernel::Math;
  int64_t head_dim = 0;         // dim / heads
  int64_t padded_head_dim = 0;  // what the kernel is handed (flash: a multiple of 8)
  std::string why;              // "auto: cuDNN for bf16 head size 128" / "forced by attention=flash"
};

// `cuda`: the trial runs on a GPU (false: the CPU, which runs math whatever is asked).
AttentionChoice attention_choice(const config::TrialConfig& config, bool cuda);

// Throughput of the kernel at `head_dim` against the same kernel at head size 128, in useful
// FLOPs: FlashAttention-2 and cuDNN compute tiles of 32 (64 above 128) head columns, so 80 runs at
// 80/96 of its tile; the softmax work per score does not shrink with the head, so small heads do
// fewer FLOPs per exponent. Constants from the catalogue (`attention_softmax_flops`).
double attention_head_speed(AttentionKernel kernel, int64_t head_dim, const hardware::Catalogue& cat);
// The kernel's speed at head size 128 against cuDNN's (the calibrated attention efficiency is
// cuDNN's, what PyTorch 2.11 runs on Hopper): catalogue constants attention_<kernel>_relative.
double attention_kernel_relative(AttentionKernel kernel, const hardware::Catalogue& cat);

const char* to_string(AttentionKernel kernel);

}  // namespace tunebench::predict
