// FLOPs per token (PaLM appendix B) and MFU with hand-computed answers (the peaks are
// core/hardware's: tests/core/hardware).
#include "core/metrics/flops.h"

#include <gtest/gtest.h>

namespace tmx = tunebench::metrics;

TEST(Flops, SevenBLlamaByThePalmFormula) {
  // N_matmul = 32 * (4 * 4096^2 + 3 * 4096 * 11008) + 4096 * 32000 = 6,607,077,376
  EXPECT_EQ(tmx::llama_matmul_parameters(32, 4096, 4096, 11008, 32000), 6'607'077'376);
  // 6 * N + 12 * 32 * 4096 * 2048 = 39,642,464,256 + 3,221,225,472
  EXPECT_DOUBLE_EQ(tmx::palm_flops_per_token(6'607'077'376, 32, 4096, 2048), 42'863'689'728.0);
}

TEST(Flops, GroupedQueryAttentionShrinksOnlyTheKeyValueProjections) {
  // Llama-3.1-8B: 8 key/value heads of 128 -> KV = 1024. Per layer 4096 * (4096 + 2048) + 4096^2 +
  // 3 * 4096 * 14336 = 218,103,808; x 32 + 4096 * 128256 = 7,504,658,432.
  EXPECT_EQ(tmx::llama_matmul_parameters(32, 4096, 1024, 14336, 128256), 7'504'658'432);
  // The attention term stays 12 L D T: the query heads are all there.
  EXPECT_DOUBLE_EQ(tmx::palm_flops_per_token(7'504'658'432, 32, 4096, 2048),
                   6.0 * 7'504'658'432 + 12.0 * 32 * 4096 * 2048);
}

TEST(Flops, MfuNeedsAPeak) {
  EXPECT_NEAR(*tmx::model_flops_utilisation(2048 / 0.268, 42'863'689'728.0, 989.0), 0.331, 0.001);
  EXPECT_FALSE(tmx::model_flops_utilisation(1000, 1e9, std::nullopt));
  EXPECT_FALSE(tmx::model_flops_utilisation(1000, 0, 989.0));
}
