// The LLaMA model's parameter layout without libtorch: the same units as engine/model/llama.h
// (embedding, one unit per block, head = final norm + output matrix, which tied embeddings leave
// in the embedding unit), with each parameter's size and whether it takes part in a matrix
// multiply. Grouped-query attention shows as a smaller wqkv. Memory and time predictions count from it; an
// engine test checks it against LlamaModel so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::predict {

struct ParamShape {
  std::string name;  // "wqkv", "w13", ...
  int64_t rows = 1;  // [out, in] for matrices, [n] (rows = n, cols = 1) for norm weights
  int64_t cols = 1;
  bool matmul = false;  // a weight of at::linear (autocast casts it; it has a GEMM)
  int64_t numel() const { return rows * cols; }
};

struct UnitShape {
  std::string name;  // "embedding", "block 0", ..., "head"
  std::vector<ParamShape> params;
  int64_t numel() const;
  int64_t matmul_numel() const;  // parameters of linear layers (the output matrix included, tied or not)
  int64_t largest_param_numel() const;
};

// Units in forward order: embedding, `layers` blocks, head.
std::vector<UnitShape> llama_units(const config::ModelDims& dims);
int64_t parameter_count(const config::ModelDims& dims);

}  // namespace tunebench::predict
