// Properties of the memory model that follow from how the engine allocates, each checked on the
// 7B preset: the terms add up, FSDP shards, compression adds its 16-bit buffers, checkpointing
// keeps only block inputs, accumulation keeps gradients alive through the next forward.
// (The recorded H200 peaks are compared in recorded_accuracy_test.cpp.)
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "core/predict/memory_model.h"
#include "core/rules/optimizer_rules.h"
#include "core/predict/model_shape.h"

namespace tc = tunebench::config;
namespace tp = tunebench::predict;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

tc::TrialConfig seven_b(tc::Strategy strategy = tc::Strategy::Single, int world = 1) {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  c.strategy = strategy;
  c.world_size = world;
  return c;
}

double params() { return static_cast<double>(tp::parameter_count(*tc::model_preset("7b"))); }
}  // namespace

TEST(MemoryModel, TermsAtThePeakAddUpToThePeak) {
  for (auto strategy : {tc::Strategy::Single, tc::Strategy::Ddp, tc::Strategy::Fsdp}) {
    auto c = seven_b(strategy, strategy == tc::Strategy::Single ? 1 : 2);
    for (bool ckpt : {false, true}) {
      c.checkpointing = ckpt;
      const auto m = tp::predict_memory(c);
      double sum = 0;
      for (const auto& t : m.at_peak) sum += t.bytes;
      EXPECT_NEAR(sum, static_cast<double>(m.peak_bytes), 1.0) << m.peak_at;
      EXPECT_GT(m.device_needed_bytes, m.peak_bytes);
    }
  }
}

TEST(MemoryModel, FsdpShardsParametersAndOptimizerState) {
  const auto single = tp::predict_memory(seven_b());
  const auto fsdp2 = tp::predict_memory(seven_b(tc::Strategy::Fsdp, 2));
  const auto fsdp4 = tp::predict_memory(seven_b(tc::Strategy::Fsdp, 4));
  // 12 bytes per parameter (fp32 weights + AdamW) resident; sharding pads each unit to n pieces.
  EXPECT_NEAR(single.resident_bytes, 12 * params(), 1.0);
  EXPECT_NEAR(fsdp2.resident_bytes, 12 * params() / 2, 12.0 * 34);
  EXPECT_NEAR(fsdp4.resident_bytes, 12 * params() / 4, 12.0 * 3 * 34);
  EXPECT_LT(fsdp4.peak_bytes, fsdp2.peak_bytes);
}

TEST(MemoryModel, DdpHoldsItsBucketsAndCompressionAddsTwoBytesPerParameter) {
  auto ddp = seven_b(tc::Strategy::Ddp, 2);
  ddp.checkpointing = true;
  auto bf16 = ddp;
  bf16.compression = tc::Compression::Bf16;
  const auto a = tp::predict_memory(ddp);
  const auto b = tp::predict_memory(bf16);
  EXPECT_NEAR(a.resident_bytes, 16 * params(), 1.0);  // weights, AdamW, gradient buckets
  EXPECT_NEAR(b.peak_bytes - a.peak_bytes, 2 * params(), 1.0);
}

TEST(MemoryModel, CheckpointingKeepsOnlyEachBlocksInput) {
  auto c = seven_b();
  const auto eager = tp::predict_memory(c);
  c.checkpointing = true;
  const auto ckpt = tp::predict_memory(c);
  EXPECT_LT(ckpt.peak_bytes, eager.peak_bytes);
  // fp32 residual stream under autocast: 4 bytes x dim per token per block
  EXPECT_DOUBLE_EQ(ckpt.block.checkpoint_bytes_per_token, 4.0 * 4096);
  // and the saved list of an eager block is the same list either way
  EXPECT_DOUBLE_EQ(ckpt.block.saved_bytes_per_token(), eager.block.saved_bytes_per_token());
}

TEST(MemoryModel, AccumulatedGradientsLiveThroughTheNextForward) {
  auto c = seven_b();
  const auto one = tp::predict_memory(c);
  c.grad_accum = 2;
  const auto two = tp::predict_memory(c);
  EXPECT_NE(two.peak_at.find("micro-step 2"), std::string::npos) << two.peak_at;
  // the second forward carries every fp32 gradient on top of the first step's live set
  EXPECT_NEAR(two.peak_bytes - one.peak_bytes, 4 * params(), 0.05 * 4 * params());
}

TEST(MemoryModel, FusedKernelsKeepFewerTensorsAndNoFp32Logits) {
  auto c = seven_b();
  c.compile = tc::Compile::Fused;
  const auto p = tp::precision_of(c);
  EXPECT_FALSE(p.autocast);
  EXPECT_EQ(p.weight_copy_bytes, 2);  // the fused linear still casts the fp32 master weights
  tp::ExecutionMode fused = tp::execution_mode(c, true), eager = fused;
  ASSERT_EQ(fused.kernels, tp::KernelMode::Fused);
  eager.kernels = tp::KernelMode::Eager;
  auto ea = tp::precision_of(seven_b());
  const auto be = tp::block_activations(c.dims, c.seq_len, ea, eager);
  const auto bf = tp::block_activations(c.dims, c.seq_len, p, fused);
  // no fp32 normalised copies (2 x 4D), no qkv buffer beside the rotated q, k (4D net), no silu(gate) (2F)
  EXPECT_DOUBLE_EQ(be.saved_bytes_per_token() - bf.saved_bytes_per_token(), 12.0 * 4096 + 2.0 * 11008 - 8);
  // the fused loss keeps nothing per vocabulary entry and token: the logits never exist whole
  const double tokens = 2048;
  const auto he = tp::head_activations(c.dims, ea, eager, tokens);
  const auto hf = tp::head_activations(c.dims, p, fused, tokens);
  EXPECT_GT(he.saved_bytes_per_token(), 32000.0 * 4);
  EXPECT_LT(hf.saved_bytes_per_token(), 16.0 * 4096);
  EXPECT_DOUBLE_EQ(hf.saved_fixed_bytes, 4.0 * 32000 * 4096);  // dW in fp32, computed in forward
  // float8 linears keep their inputs in one byte
  c.amp = tc::Amp::Fp8;
  const auto b8 = tp::block_activations(c.dims, c.seq_len, tp::precision_of(c), fused);
  EXPECT_LT(b8.saved_bytes_per_token(), bf.saved_bytes_per_token());
}

TEST(MemoryModel, ATiedLookupsGradientIsTheTableOrUnderCompileFusedOnOneRankTheBatchsRows) {
  // A tied vocabulary far larger than the rest: at the lookup's backward the head's gradient of the
  // table waits for the lookup's. Dense (eager, or DDP): a second table. tied_lookup_rows: only the
  // micro-batch's rows, so that moment is no longer the peak.
  tc::TrialConfig c = seven_b();
  c.dims = tc::ModelDims{};  // the tiny preset's block, one of it
  c.dims.layers = 1;
  c.dims.vocab = 1000000;
  c.dims.tie_embeddings = true;
  c.seq_len = 64;
  c.micro_batch = 1;
  c.amp = tc::Amp::Bf16;
  const auto lookup = [](const tp::MemoryPrediction& m) {
    for (const auto& t : m.at_peak)
      if (t.name.rfind("tied embedding gradient of the lookup", 0) == 0) return t.bytes;
    return -1.0;
  };
  const double table = 4.0 * 1000000 * 256;
  for (auto [compile, strategy] : {std::pair{tc::Compile::Off, tc::Strategy::Single},
                                   std::pair{tc::Compile::Fused, tc::Strategy::Ddp}}) {
    c.compile = compile;
    c.strategy = strategy;
    ASSERT_FALSE(c.tied_lookup_rows());
    const auto dense = tp::predict_memory(c);
    EXPECT_EQ(dense.peak_at, "backward of embedding");
    EXPECT_DOUBLE_EQ(lookup(dense), table);
  }
  c.compile = tc::Compile::Fused;
  c.strategy = tc::Strategy::Single;
  ASSERT_TRUE(c.tied_lookup_rows());
  const auto rows = tp::predict_memory(c);
  EXPECT_NE(rows.peak_at, "backward of embedding");
  const double lookup_rows = lookup(rows);
  EXPECT_TRUE(lookup_rows < 0 || lookup_rows == 4.0 * 64 * 256) << lookup_rows;
}

TEST(MemoryModel, SevenBillionFitsNo24GBCardWhateverTheStrategy) {
  // The forum's first mistake: full AdamW training of 7B needs ~16 bytes per parameter.
  for (auto strategy : {tc::Strategy::Ddp, tc::Strategy::Fsdp}) {
    for (bool ckpt : {false, true}) {
      auto c = seven_b(strategy, 2);
      c.checkpointing = ckpt;
      const auto m = tp::predict_memory(c);
      EXPECT_EQ(tp::fit_of(m, 24LL << 30), tp::Fit::DoesNotFit) << m.peak_bytes / kGiB;
    }
  }
}

TEST(MemoryModel, TheCpuHasNoDeviceOverheadsAndKeepsAttentionProbabilities) {
  tc::TrialConfig c;  // cpu-tiny
  tp::MemoryOptions cpu;
  cpu.cuda = false;
  const auto m = tp::predict_memory(c, cpu);
  EXPECT_TRUE(m.overheads.empty());
  EXPECT_EQ(m.device_needed_bytes, m.peak_bytes);
  bool probabilities = false;
  for (const auto& t : m.block.saved)
    if (t.op == "sdpa (math)" && t.bytes_per_token == 4.0 * c.dims.heads * c.seq_len) probabilities = true;
  EXPECT_TRUE(probabilities);
}

TEST(MemoryModel, EveryRankBuildsTheWholeModelBeforeFsdpShardsIt) {
  // 7B FSDP on the CPU: each rank first holds all fp32 weights (27 GB), whatever the shard size.
  auto c = seven_b(tc::Strategy::Fsdp, 2);
  c.device = tc::Device::Cpu;
  tp::MemoryOptions cpu;
  cpu.cuda = false;
  const auto m = tp::predict_memory(c, cpu);
  EXPECT_NEAR(m.construction_bytes, 4 * params(), 1.0);
  EXPECT_GE(m.device_needed_bytes, m.construction_bytes);
  EXPECT_EQ(tp::fit_of(m, 23LL << 30), tp::Fit::DoesNotFit);
}

// grad_dtype bf16 (rules::half_weight_grads): the blocks' matmul weights' gradients are bf16.
// With a short sequence and checkpointing (whose blocks let go of the weight copies after their
// forward) the 7B's peak comes where every gradient is alive, the embedding's backward: the
// "gradients" term there is exactly the fp32 one less 2 bytes a block matmul weight.
TEST(MemoryModel, Bf16WeightGradsHoldTheBlocksMatmulGradientsInTwoBytes) {
  tc::TrialConfig c = *tc::trial_preset("7b-single-fused");
  ASSERT_EQ(c.amp, tc::Amp::Bf16);
  EXPECT_FALSE(tunebench::rules::half_weight_grads(c, true)) << "fp32 unless asked for";
  c.grad_dtype = tc::DType::Bf16;
  EXPECT_TRUE(tunebench::rules::half_weight_grads(c, true));
  EXPECT_FALSE(tunebench::rules::half_weight_grads(c, false)) << "the CPU has no AdamW kernel to read them";
  c.seq_len = 64;
  c.checkpointing = true;
  tc::TrialConfig fp32 = c;
  fp32.grad_dtype = tc::DType::Fp32;
  const auto gradients = [](const tp::MemoryPrediction& m) {
    for (const auto& t : m.at_peak)
      if (t.name == "gradients") return t.bytes;
    return -1.0;
  };
  const auto half = tp::predict_memory(c), full = tp::predict_memory(fp32);
  const auto units = tp::llama_units(c.dims);
  double block_matmul = 0, numel = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    numel += static_cast<double>(units[u].numel());
    if (u > 0 && u + 1 < units.size()) block_matmul += static_cast<double>(units[u].matmul_numel());
  }
  EXPECT_EQ(half.peak_at, "backward of embedding");
  EXPECT_EQ(full.peak_at, "backward of embedding");
  EXPECT_DOUBLE_EQ(gradients(full), numel * 4);
  EXPECT_DOUBLE_EQ(gradients(half), numel * 4 - block_matmul * 2);
  EXPECT_NEAR(static_cast<double>(full.peak_bytes - half.peak_bytes), block_matmul * 2, 1.0);
}
