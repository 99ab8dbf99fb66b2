#include "core/metrics/flops.h"

namespace tunebench::metrics {

int64_t llama_matmul_parameters(int64_t layers, int64_t dim, int64_t kv_dim, int64_t ffn, int64_t vocab) {
  return layers * (dim * (dim + 2 * kv_dim) + dim * dim + 3 * dim * ffn) + dim * vocab;
}

double palm_flops_per_token(int64_t n_matmul, int64_t layers, int64_t dim, int64_t seq_len) {
  return 6.0 * static_cast<double>(n_matmul) +
         12.0 * static_cast<double>(layers) * static_cast<double>(dim) * static_cast<double>(seq_len);
}

std::optional<double> model_flops_utilisation(double tokens_per_s_per_device, double flops_per_token,
                                              std::optional<double> peak_tflops) {
  if (!peak_tflops || *peak_tflops <= 0 || flops_per_token <= 0) return std::nullopt;
  return tokens_per_s_per_device * flops_per_token / (*peak_tflops * 1e12);
}

}  // namespace tunebench::metrics
