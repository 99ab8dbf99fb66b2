// Model FLOPs per token and model FLOPs utilisation (MFU).
//
// FLOPs per token = 6 * N_matmul + 12 * L * D * T (PaLM, Chowdhery et al. 2022, appendix B):
// N_matmul are the parameters taking part in matrix multiplies (everything but the embedding
// lookup and the norms), L layers, D = heads * head size, T the sequence length. For the LLaMA
// architecture N_matmul = L * (D * (D + 2 KV) + D^2 + 3 D F) + D * V, KV the width of the keys
// and of the values (D without grouped-query attention: the familiar 4 D^2). The attention term
// counts the query heads (QK^T and PV are D wide whatever the key/value heads). Tied embeddings
// change neither: the output head is a D x V matmul either way. MFU is measured against the
// device's dense bf16 peak (core/hardware: mfu_peak_tflops) whatever precision the trial ran in,
// as torchtitan does; no peak, no MFU.
#pragma once

#include <cstdint>
#include <optional>

namespace tunebench::metrics {

// `kv_dim`: key/value heads x head size (= dim for multi-head attention).
int64_t llama_matmul_parameters(int64_t layers, int64_t dim, int64_t kv_dim, int64_t ffn, int64_t vocab);
double palm_flops_per_token(int64_t matmul_parameters, int64_t layers, int64_t dim, int64_t seq_len);
// MFU in 0..1: tokens/s per device * FLOPs per token / peak. nullopt when the peak is unknown.
std::optional<double> model_flops_utilisation(double tokens_per_s_per_device, double flops_per_token,
                                              std::optional<double> peak_tflops);

}  // namespace tunebench::metrics
