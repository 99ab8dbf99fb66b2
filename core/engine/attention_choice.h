// Which SDPA kernel the model's attention runs: chosen on the device that runs, before the first
// step.
//
// The candidates and how they are ranked are core/rules/attention.h's (the rule the predictions
// assume); the speeds are this GPU's. Under `auto` in 16 bits each candidate (cuDNN, flash,
// memory-efficient) that PyTorch's SDPA would run on tensors of the trial's layout
// (`_fused_sdp_choice` with only that kernel allowed) is timed here, forward and backward at the
// trial's heads, key/value heads, sequence and handed head size (batch 1: every kernel spreads the
// batch over the GPU alike), and the fastest runs. The timings and the choice go into the trial's
// log, the choice into its model event (`attention`). A forced kernel, or fp32's one, is checked
// and not timed; a forced kernel that cannot run the shape is refused before any work; if none of
// `auto`'s can, PyTorch's own choice runs, with a warning. The CPU runs the composite math.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <c10/core/ScalarType.h>

#include "core/config/trial_config.h"
#include "core/engine/device.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

struct AttentionPick {
  int64_t head_dim = 0;   // the head size SDPA is handed (16-bit kernels: padded to a multiple of 8)
  std::string described;  // "cudnn (auto: cudnn for bf16 head size 128, timed here 321 TFLOP/s)"
};

// Sets PyTorch's SDPA switches to the chosen kernel and says which it is. `compute`: the dtype the
// attention runs in. Throws EngineError (config) for a forced kernel that cannot run the shape.
AttentionPick choose_attention(const config::TrialConfig& config, const DeviceContext& device, at::ScalarType compute,
                               const std::function<void(protocol::Payload)>& sink);

}  // namespace tunebench::engine
