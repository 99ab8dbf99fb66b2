// FLOPs per token (PaLM appendix B), device peaks and MFU with hand-computed answers.
#include "core/metrics/flops.h"

#include <gtest/gtest.h>

#include "core/metrics/peak_flops.h"

namespace tmx = tunebench::metrics;

TEST(Flops, SevenBLlamaByThePalmFormula) {
  // N_matmul = 32 * (4 * 4096^2 + 3 * 4096 * 11008) + 4096 * 32000 = 6,607,077,376
  EXPECT_EQ(tmx::llama_matmul_parameters(32, 4096, 11008, 32000), 6'607'077'376);
  // 6 * N + 12 * 32 * 4096 * 2048 = 39,642,464,256 + 3,221,225,472
  EXPECT_DOUBLE_EQ(tmx::palm_flops_per_token(6'607'077'376, 32, 4096, 2048), 42'863'689'728.0);
}

TEST(Flops, MfuNeedsAPeak) {
  EXPECT_NEAR(*tmx::model_flops_utilisation(2048 / 0.268, 42'863'689'728.0, 989.0), 0.331, 0.001);
  EXPECT_FALSE(tmx::model_flops_utilisation(1000, 1e9, std::nullopt));
  EXPECT_FALSE(tmx::model_flops_utilisation(1000, 0, 989.0));
}

TEST(PeakFlops, DatasheetDenseBf16ByDeviceName) {
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA H200"), 989.0);
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA H100 80GB HBM3"), 989.0);
  // The PCIe board is not the SXM part (the engine's old table said 989 for it).
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA H100 PCIe"), 756.0);
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA H100 NVL"), 835.0);
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA A100-SXM4-80GB"), 312.0);
  EXPECT_EQ(*tmx::peak_dense_bf16_tflops("NVIDIA GeForce RTX 4090"), 165.0);
  EXPECT_FALSE(tmx::peak_dense_bf16_tflops("cpu"));
  EXPECT_FALSE(tmx::peak_dense_bf16_tflops("NVIDIA GeForce RTX 3090"));
}
