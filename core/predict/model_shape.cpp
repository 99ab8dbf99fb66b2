#include "core/predict/model_shape.h"

#include <algorithm>

namespace tunebench::predict {

int64_t UnitShape::numel() const {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

int64_t UnitShape::matmul_numel() const {
  int64_t n = 0;
  for (const auto& p : params)
    if (p.matmul) n += p.numel();
  return n;
}

int64_t UnitShape::largest_param_numel() const {
  int64_t n = 0;
  for (const auto& p : params) n = std::max(n, p.numel());
  return n;
}

std::vector<UnitShape> llama_units(const config::ModelDims& d) {
  std::vector<UnitShape> units;
  // The embedding table is a lookup, not a matmul (PaLM's convention leaves it out of N_matmul),
  // unless it is also the output head's matrix (tied embeddings).
  units.push_back({"embedding", {{"tok_embeddings", d.vocab, d.dim, d.tie_embeddings}}});
  for (int64_t l = 0; l < d.layers; ++l) {
    // wqkv: the query rows (dim) and, for grouped-query attention, fewer key and value rows.
    units.push_back({"block " + std::to_string(l),
                     {{"attn_norm", d.dim, 1, false},
                      {"wqkv", d.qkv_dim(), d.dim, true},
                      {"wo", d.dim, d.dim, true},
                      {"ffn_norm", d.dim, 1, false},
                      {"w13", 2 * d.ffn, d.dim, true},
                      {"w2", d.dim, d.ffn, true}}});
  }
  UnitShape head{"head", {{"norm", d.dim, 1, false}}};
  if (!d.tie_embeddings) head.params.push_back({"output", d.vocab, d.dim, true});
  units.push_back(std::move(head));
  return units;
}

int64_t parameter_count(const config::ModelDims& dims) {
  int64_t n = 0;
  for (const auto& u : llama_units(dims)) n += u.numel();
  return n;
}

}  // namespace tunebench::predict
