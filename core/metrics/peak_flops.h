// The dense bf16 tensor-core peak of a device, looked up from its name as NVML reports it
// ("NVIDIA H200", "NVIDIA H100 PCIe"). The one table both the worker (done summary's MFU) and the
// analysis use.
//
// Deliberately one function over one small table (peak_flops.cpp, with the datasheet of every
// row): a hardware catalogue can replace the table behind the same signature. An unknown device
// has no peak and therefore no MFU, never a guess.
#pragma once

#include <optional>
#include <string_view>

namespace tunebench::metrics {

// Dense (no sparsity) bf16 peak in TFLOP/s (1e12 FLOP/s); nullopt for unknown devices and "cpu".
std::optional<double> peak_dense_bf16_tflops(std::string_view device_name);

}  // namespace tunebench::metrics
