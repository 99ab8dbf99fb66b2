// Datasheet values, dense bf16 tensor throughput (the datasheets print the 2:4-sparsity figure,
// twice these):
// - H100 SXM5 and H200 SXM: 1,979 sparse -> 989 (NVIDIA H100 / H200 datasheets).
// - H100 PCIe: 1,513 sparse -> 756. The PCIe board clocks lower than the SXM part, so the old
//   engine table's 989 for every "H100" overstated its peak by 31 % (MFU understated).
// - H100 NVL and H200 NVL: 1,671 sparse -> 835.
// - A100 (SXM4 and PCIe): 312 dense (NVIDIA A100 datasheet).
// - RTX 4090: 165.2 with fp32 accumulation (Ada Lovelace whitepaper, appendix A), the mode
//   training uses.
#include "core/metrics/peak_flops.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace tunebench::metrics {
namespace {

struct PeakEntry {
  const char* name_part;  // case-insensitive substring of the device name
  double tflops;
};
// More specific names first: "h100 pcie" before "h100".
constexpr PeakEntry kPeaks[] = {
    {"h100 pcie", 756.0}, {"h100 nvl", 835.0}, {"h200 nvl", 835.0}, {"h100", 989.0},
    {"h200", 989.0},      {"a100", 312.0},     {"rtx 4090", 165.0},
};

}  // namespace

std::optional<double> peak_dense_bf16_tflops(std::string_view device_name) {
  std::string lower(device_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& e : kPeaks)
    if (lower.find(e.name_part) != std::string::npos) return e.tflops;
  return std::nullopt;
}

}  // namespace tunebench::metrics
