#include "core/analysis/mfu.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace tunebench::analysis {

namespace {
struct PeakEntry {
  const char* name_part;  // case-insensitive substring of the device name
  double tflops;
};
// More specific names first: the PCIe and NVL H100 boards have lower clocks than the SXM part.
constexpr PeakEntry kPeaks[] = {
    {"h100 pcie", 756.0}, {"h100 nvl", 835.0}, {"h100", 989.0}, {"h200", 989.0}, {"a100", 312.0}, {"rtx 4090", 165.0},
};
}  // namespace

std::optional<double> peak_bf16_tflops(std::string_view device_name) {
  std::string lower(device_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& e : kPeaks)
    if (lower.find(e.name_part) != std::string::npos) return e.tflops;
  return std::nullopt;
}

int64_t matmul_parameters(const config::ModelDims& d) {
  return d.layers * (4 * d.dim * d.dim + 3 * d.dim * d.ffn) + d.dim * d.vocab;
}

double palm_flops_per_token(int64_t n_matmul, int64_t layers, int64_t dim, int64_t seq_len) {
  return 6.0 * static_cast<double>(n_matmul) +
         12.0 * static_cast<double>(layers) * static_cast<double>(dim) * static_cast<double>(seq_len);
}

std::optional<double> model_flops_utilisation(double tokens_per_s_per_gpu, double flops_per_token,
                                              std::optional<double> peak_tflops) {
  if (!peak_tflops || *peak_tflops <= 0 || flops_per_token <= 0) return std::nullopt;
  return tokens_per_s_per_gpu * flops_per_token / (*peak_tflops * 1e12);
}

}  // namespace tunebench::analysis
