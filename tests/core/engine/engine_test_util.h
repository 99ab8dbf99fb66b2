// Small models and configs for engine tests: fast on two CPU cores.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"
#include "core/protocol/events.h"

namespace tunebench::engine::testing {

// A 2-layer custom model (dim 64, 4 heads, FFN 176, vocab 96) at sequence 32, micro-batch 4.
config::TrialConfig small_config();
// Random token batch [batch, seq+1] for `config` (deterministic in `seed`).
at::Tensor random_tokens(const config::TrialConfig& config, int64_t batch, uint64_t seed);
// Writes a uint16 token file with a repeating pattern of `period` tokens (learnable structure).
std::string write_pattern_file(const std::string& name, int64_t tokens, int period, int vocab);
// Largest |a-b| / (max |b| + tiny) over tensors.
double max_rel_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b);
// Collects events written by a trainer.
struct Events {
  std::vector<protocol::Payload> all;
  std::vector<protocol::Step> steps() const;
};

}  // namespace tunebench::engine::testing
