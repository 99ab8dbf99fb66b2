// Model FLOPs utilisation: FLOPs per token (PaLM convention), device peaks, and MFU itself.
//
// FLOPs per token = 6 * N_matmul + 12 * L * D * T (PaLM, Chowdhery et al. 2022, appendix B):
// N_matmul are the parameters taking part in matrix multiplies (everything but the embedding
// table and the norms), L layers, D = heads * head size, T the sequence length. The peak is dense
// bf16 tensor throughput looked up from the device name; an unknown device has no MFU, never a guess.
// MFU is measured against the bf16 peak whatever precision the trial ran in (as torchtitan does).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/config/trial_config.h"

namespace tunebench::analysis {

// Dense bf16 peak in TFLOP/s (1e12) for a device name as NVML reports it ("NVIDIA H200").
std::optional<double> peak_bf16_tflops(std::string_view device_name);

// Matmul parameters of the LLaMA architecture: L * (4 D^2 + 3 D F) + D * V (untied output head).
int64_t matmul_parameters(const config::ModelDims& dims);

double palm_flops_per_token(int64_t matmul_parameters, int64_t layers, int64_t dim, int64_t seq_len);

// MFU in 0..1: tokens/s per GPU * FLOPs per token / peak. nullopt when the peak is unknown.
std::optional<double> model_flops_utilisation(double tokens_per_s_per_gpu, double flops_per_token,
                                              std::optional<double> peak_tflops);

}  // namespace tunebench::analysis
