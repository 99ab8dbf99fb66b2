// The weights the optimizer writes for the next forward (optim/optimizer.h, model/llama.h).
#pragma once

#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace tunebench::engine {

// What the project's AdamW kernel writes beside an updated parameter, for the next forward to read
// instead of casting the fp32 weight (model/llama.h): a 16-bit copy of the parameter (`half`, its
// size), or for the weight of a float8 linear (kernels/fp8_linear.h) its e4m3 cast in both layouts
// the linear's GEMMs read, with the linear's delayed-scaling slots for that weight. Undefined: none.
struct WeightCopy {
  WeightCopy() = default;
  WeightCopy(at::Tensor half_copy) : half(std::move(half_copy)) {}  // NOLINT(google-explicit-constructor)
  at::Tensor half;
  at::Tensor fp8, fp8_t;  // [rows, cols] and [cols, rows], float8 e4m3
  const float* amax_history = nullptr;
  float* amax_current = nullptr;
  float* inv_scale = nullptr;
  bool defined() const { return half.defined() || fp8.defined(); }
};
using WeightCopies = std::vector<WeightCopy>;

}  // namespace tunebench::engine
