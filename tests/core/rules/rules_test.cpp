// The rules the benchmark and the predictions share (core/rules): the attention candidates and
// their ranking, AdamW's weight copies and bf16 weight gradients, the fused loss's chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/rules/attention.h"
#include "core/rules/optimizer_rules.h"
#include "core/rules/thresholds.h"

namespace tc = tunebench::config;
namespace tr = tunebench::rules;

namespace {

tc::TrialConfig bf16(const char* model) {
  tc::TrialConfig c;
  c.model = model;
  c.dims = *tc::model_preset(model);
  c.amp = tc::Amp::Bf16;
  return c;
}

}  // namespace

TEST(AttentionRule, RankingFollowsTheSpeeds) {
  using K = tr::AttentionKernel;
  // models-probe at head size 100 padded to 104, 32 heads, bf16 (TFLOP/s): cuDNN 157.1, flash
  // 102.5, efficient 73.3.
  EXPECT_EQ(tr::rank_attention({{K::Flash, 102.5}, {K::Cudnn, 157.1}, {K::Efficient, 73.3}}),
            (std::vector<K>{K::Cudnn, K::Flash, K::Efficient}));
  // Whatever is faster wins; a kernel that cannot run (0) is left out; ties keep the given order.
  EXPECT_EQ(tr::rank_attention({{K::Cudnn, 150}, {K::Flash, 160}, {K::Efficient, 0}}), (std::vector<K>{K::Flash, K::Cudnn}));
  EXPECT_EQ(tr::rank_attention({{K::Cudnn, 100}, {K::Flash, 100}}), (std::vector<K>{K::Cudnn, K::Flash}));
  EXPECT_TRUE(tr::rank_attention({{K::Cudnn, 0}}).empty());
}

// auto in 16 bits on a GPU is a choice by speed among three, each handed the padded head size;
// fp32, a forced kernel and the CPU are one candidate each.
TEST(AttentionRule, CandidatesByPrecisionKnobAndDevice) {
  using K = tr::AttentionKernel;
  tc::TrialConfig c = bf16("7b");
  c.dims = {3200, 2, 32, 8640, 32000};  // head size 100
  const auto auto16 = tr::attention_candidates(c, true);
  ASSERT_EQ(auto16.size(), 3u);
  EXPECT_EQ(auto16[0].kernel, K::Cudnn);
  EXPECT_EQ(auto16[1].kernel, K::Flash);
  EXPECT_EQ(auto16[2].kernel, K::Efficient);
  for (const auto& a : auto16) {
    EXPECT_EQ(a.head_dim, 100);
    EXPECT_EQ(a.padded_head_dim, 104);
  }
  const auto cpu = tr::attention_candidates(c, false);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].kernel, K::Math);
  EXPECT_EQ(cpu[0].padded_head_dim, 100);
  c.amp = tc::Amp::Fp32;
  const auto fp32 = tr::attention_candidates(c, true);
  ASSERT_EQ(fp32.size(), 1u);
  EXPECT_EQ(fp32[0].kernel, K::Efficient);
  EXPECT_EQ(fp32[0].padded_head_dim, 100);
  c.amp = tc::Amp::Bf16;
  c.attention = tc::Attention::Flash;
  const auto forced = tr::attention_candidates(c, true);
  ASSERT_EQ(forced.size(), 1u);
  EXPECT_EQ(forced[0].kernel, K::Flash);
  EXPECT_NE(forced[0].why.find("attention=flash"), std::string::npos) << forced[0].why;
}

// The ranked list says where the speeds came from, and leaves out what cannot run.
TEST(AttentionRule, RankedCandidatesSayWhyAndWhere) {
  using K = tr::AttentionKernel;
  tc::TrialConfig c = bf16("7b");
  c.dims = {3200, 2, 32, 8640, 32000};
  const auto ranked = tr::rank_candidates(c, tr::attention_candidates(c, true), {150, 160, 0}, "timed here");
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].kernel, K::Flash);
  EXPECT_EQ(ranked[1].kernel, K::Cudnn);
  EXPECT_EQ(ranked[0].why, "auto: flash for bf16 head size 100, timed here 160 TFLOP/s, padded to 104");
  c.dims.kv_heads = 8;
  EXPECT_NE(tr::rank_candidates(c, tr::attention_candidates(c, true), {1, 0, 0}, "measured")[0].why.find("grouped"),
            std::string::npos);
  EXPECT_TRUE(tr::rank_candidates(c, tr::attention_candidates(c, true), {0, 0, 0}, "measured").empty());
}

// The FLOPs a kernel's speed is counted with: lab/models_probe.py's, 4 B H T^2 hd / 2 x 3.5.
TEST(AttentionRule, FlopsOfCausalForwardAndBackward) {
  EXPECT_DOUBLE_EQ(tr::attention_fwd_bwd_flops(1, 32, 2048, 128), 4.0 * 32 * 2048.0 * 2048 * 128 / 2 * 3.5);
  EXPECT_DOUBLE_EQ(tr::attention_fwd_bwd_flops(2, 32, 2048, 128), 2 * tr::attention_fwd_bwd_flops(1, 32, 2048, 128));
}

TEST(OptimizerRules, WeightCopiesApplyToOneGpuWithFusedKernelsAndAdamw) {
  tc::TrialConfig c = bf16("tiny");
  c.compile = tc::Compile::Fused;
  EXPECT_TRUE(tr::optimizer_weight_copies_apply(c, true));
  EXPECT_FALSE(tr::optimizer_weight_copies_apply(c, false)) << "the CPU has no AdamW kernel to write them";
  tc::TrialConfig d = c;
  d.compile = tc::Compile::FusedGraph;
  EXPECT_FALSE(tr::optimizer_weight_copies_apply(d, true));
  d = c;
  d.strategy = tc::Strategy::Ddp;
  EXPECT_FALSE(tr::optimizer_weight_copies_apply(d, true));
  d = c;
  d.amp = tc::Amp::Fp8;
  EXPECT_TRUE(tr::optimizer_weight_copies_apply(d, true));
  d.optimizer_overlap = true;
  EXPECT_FALSE(tr::optimizer_weight_copies_apply(d, true)) << "fp8's amax is rolled after overlapped updates";
  d = c;
  d.fused_optimizer = false;
  EXPECT_FALSE(tr::optimizer_weight_copies_apply(d, true));
}

// The copies take the gradients' and the casts' place unit by unit, except when the update
// overlaps the backward; they are written where the device holds that (unknown: room).
TEST(OptimizerRules, WeightCopiesAddOneUnitOrAllAndFitWhatIsFree) {
  tc::TrialConfig c = bf16("tiny");
  c.compile = tc::Compile::Fused;
  EXPECT_EQ(tr::weight_copies_added_bytes(c, 100, 1000), 100);
  c.optimizer_overlap = true;
  EXPECT_EQ(tr::weight_copies_added_bytes(c, 100, 1000), 1000);
  EXPECT_TRUE(tr::weight_copies_fit(100, 100));
  EXPECT_FALSE(tr::weight_copies_fit(101, 100));
  EXPECT_TRUE(tr::weight_copies_fit(1 << 30, -1));
}

TEST(OptimizerRules, HalfWeightGradsWhereTheKernelReadsThem) {
  tc::TrialConfig c = bf16("tiny");
  c.compile = tc::Compile::Fused;
  EXPECT_FALSE(tr::half_weight_grads(c, true)) << "fp32 unless asked for";
  c.grad_dtype = tc::DType::Bf16;
  EXPECT_TRUE(tr::half_weight_grads(c, true));
  EXPECT_FALSE(tr::half_weight_grads(c, false));
  c.grad_accum = 2;
  EXPECT_FALSE(tr::half_weight_grads(c, true));
}

// Logits of at most 2^28 elements at a time: 8192 rows of a 32000 vocabulary, all of a small batch.
TEST(OptimizerRules, LossChunkHoldsAtMost2To28Logits) {
  EXPECT_EQ(tr::loss_chunk_rows(100, 32000), 100);
  EXPECT_EQ(tr::loss_chunk_rows(20000, 32000), (int64_t{1} << 28) / 32000);
  EXPECT_EQ(tr::loss_chunk_rows(20000, int64_t{1} << 30), 1);
  EXPECT_LE(tr::loss_chunk_rows(1 << 20, 128256) * 128256, int64_t{1} << 28);
}

TEST(Thresholds, HostBoundAtATenthOfTheStep) { EXPECT_DOUBLE_EQ(tr::kIdleShare, 0.10); }
