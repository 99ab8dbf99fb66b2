// One test per validation rule: each bad value yields a problem naming its knob.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"

namespace tc = tunebench::config;

namespace {
bool flags(const tc::TrialConfig& c, const std::string& key) {
  for (const auto& p : tc::validate(c))
    if (p.key == key) return !p.message.empty();
  return false;
}
}  // namespace

TEST(Validate, ZeroOrNegativeSizes) {
  for (const char* key : {"micro_batch", "grad_accum", "steps"}) {
    tc::TrialConfig c;
    ASSERT_FALSE(tc::set_knob(c, key, "0"));
    EXPECT_TRUE(flags(c, key)) << key;
    ASSERT_FALSE(tc::set_knob(c, key, "-3"));
    EXPECT_TRUE(flags(c, key)) << key;
  }
  tc::TrialConfig c;
  c.seq_len = 1;
  EXPECT_TRUE(flags(c, "seq_len"));
  c = {};
  c.model = "custom";
  c.dims.dim = 0;
  EXPECT_TRUE(flags(c, "dim"));
  c = {};
  c.model = "custom";
  c.dims.layers = -1;
  EXPECT_TRUE(flags(c, "layers"));
  c = {};
  c.model = "custom";
  c.dims.ffn = 0;
  EXPECT_TRUE(flags(c, "ffn"));
  c = {};
  c.model = "custom";
  c.dims.vocab = 1;
  EXPECT_TRUE(flags(c, "vocab"));
  c = {};
  c.bucket_mb = 0;
  EXPECT_TRUE(flags(c, "bucket_mb"));
  c = {};
  c.first_bucket_mb = -1;
  EXPECT_TRUE(flags(c, "first_bucket_mb"));
  c = {};
  c.num_workers = -1;
  EXPECT_TRUE(flags(c, "num_workers"));
  c = {};
  c.sample_cpu_us = -5;
  EXPECT_TRUE(flags(c, "sample_cpu_us"));
  c = {};
  c.lr = 0;
  EXPECT_TRUE(flags(c, "lr"));
  c = {};
  c.grad_clip = -1;
  EXPECT_TRUE(flags(c, "grad_clip"));
  c = {};
  c.gpu_sample_hz = 0;
  EXPECT_TRUE(flags(c, "gpu_sample_hz"));
  c = {};
  c.rendezvous_timeout_s = 0;
  EXPECT_TRUE(flags(c, "rendezvous_timeout_s"));
}

TEST(Validate, DimsThatDoNotDivide) {
  tc::TrialConfig c;
  c.model = "custom";
  c.dims = {250, 2, 4, 512, 1000};  // 250 / 4 heads
  EXPECT_TRUE(flags(c, "heads"));
  c.dims = {300, 2, 100, 512, 1000};  // head size 3: odd, no RoPE
  EXPECT_TRUE(flags(c, "heads"));
  c.dims = {256, 2, 4, 512, 1000};
  EXPECT_FALSE(flags(c, "heads"));
}

TEST(Validate, PresetDimsCannotBeEditedWithoutCustom) {
  tc::TrialConfig c;
  c.dims.dim = 512;  // model still "tiny"
  EXPECT_TRUE(flags(c, "model"));
  c.model = "custom";
  EXPECT_FALSE(flags(c, "model"));
}

TEST(Validate, WorldSizeVersusStrategy) {
  tc::TrialConfig c;
  c.world_size = 2;  // single with two ranks
  EXPECT_TRUE(flags(c, "world_size"));
  c.strategy = tc::Strategy::Ddp;
  EXPECT_FALSE(flags(c, "world_size"));
  c.world_size = 1;
  EXPECT_TRUE(flags(c, "world_size"));
  c.strategy = tc::Strategy::Fsdp;
  EXPECT_TRUE(flags(c, "world_size"));
  c.world_size = 0;
  EXPECT_TRUE(flags(c, "world_size"));
  c.world_size = 5000;
  EXPECT_TRUE(flags(c, "world_size"));
}

TEST(Validate, WarmupMustLeaveMeasuredSteps) {
  tc::TrialConfig c;
  c.steps = 5;
  c.warmup = 5;
  EXPECT_TRUE(flags(c, "warmup"));
  c.warmup = -1;
  EXPECT_TRUE(flags(c, "warmup"));
  c.warmup = 4;
  EXPECT_FALSE(flags(c, "warmup"));
}

TEST(Validate, KernelSamplePeriodZeroIsOffWhateverTheSampledSteps) {
  tc::TrialConfig c;  // defaults: 2 of every 20
  EXPECT_FALSE(flags(c, "kernel_sample_steps"));
  c.kernel_sample_every = 0;  // "off", with kernel_sample_steps left at its default
  EXPECT_FALSE(flags(c, "kernel_sample_steps"));
  EXPECT_FALSE(flags(c, "kernel_sample_every"));
  EXPECT_TRUE(tc::validate(c).empty());
  c.warmup = 1;
  for (int64_t i = 0; i < c.steps; ++i) EXPECT_FALSE(c.kernel_sampled(i)) << i;  // and nothing is sampled
  c.kernel_sample_steps = -1;  // still never negative
  EXPECT_TRUE(flags(c, "kernel_sample_steps"));
  c.kernel_sample_every = 4;
  c.kernel_sample_steps = 5;  // more sampled steps than the period
  EXPECT_TRUE(flags(c, "kernel_sample_steps"));
  c.kernel_sample_steps = 4;
  EXPECT_FALSE(flags(c, "kernel_sample_steps"));
  c.kernel_sample_every = -1;
  EXPECT_TRUE(flags(c, "kernel_sample_every"));
}

TEST(Validate, DeviceDependentKnobs) {
  tc::TrialConfig c;
  c.device = tc::Device::Cpu;
  c.amp = tc::Amp::Fp16;
  EXPECT_TRUE(flags(c, "amp"));
  c.amp = tc::Amp::Bf16;
  EXPECT_FALSE(flags(c, "amp"));
  c.compile = tc::Compile::Graph;
  EXPECT_TRUE(flags(c, "compile"));
  c.compile = tc::Compile::Fused;  // on the CPU the fused ops run unfused, but they run
  EXPECT_FALSE(flags(c, "compile"));
  c.compile = tc::Compile::Off;
  c.amp = tc::Amp::Fp8;
  EXPECT_TRUE(flags(c, "amp"));
  c.amp = tc::Amp::Bf16;
  c.pin_memory = true;
  EXPECT_TRUE(flags(c, "pin_memory"));
}

TEST(Validate, CompressionOnlyForDdp) {
  tc::TrialConfig c;
  c.compression = tc::Compression::Bf16;
  EXPECT_TRUE(flags(c, "compression"));
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  EXPECT_FALSE(flags(c, "compression"));
}

TEST(Validate, FileDataNeedsAPath) {
  tc::TrialConfig c;
  c.data = tc::DataSource::File;
  EXPECT_TRUE(flags(c, "data_path"));
  c.data_path = "tokens.bin";
  EXPECT_FALSE(flags(c, "data_path"));
}

TEST(Validate, NcclEnvironmentIsChecked) {
  tc::TrialConfig c;
  c.nccl_env["LD_PRELOAD"] = "/tmp/evil.so";
  EXPECT_TRUE(flags(c, "nccl_env"));
  c.nccl_env.clear();
  c.nccl_env["NCCL_ALGO"] = "Ring\nrm -rf /";
  EXPECT_TRUE(flags(c, "nccl_env"));
  c.nccl_env["NCCL_ALGO"] = "Ring";
  c.nccl_env["TORCH_NCCL_BLOCKING_WAIT"] = "1";
  EXPECT_FALSE(flags(c, "nccl_env"));
}

TEST(Validate, ReportsEveryProblemAtOnce) {
  tc::TrialConfig c;
  c.micro_batch = 0;
  c.steps = 0;
  c.world_size = 3;
  EXPECT_GE(tc::validate(c).size(), 3u);
  EXPECT_NE(tc::describe(tc::validate(c)).find("micro_batch: "), std::string::npos);
}

TEST(Validate, TimeoutsAreFiniteAndAtMostAWeek) {
  // inf and 1e30 s used to overflow the worker's clock arithmetic and end the run at once.
  for (const char* key : {"rendezvous_timeout_s", "collective_timeout_s"}) {
    for (const char* text : {"inf", "nan", "-1", "0"}) {
      tc::TrialConfig c;
      const auto set = tc::set_knob(c, key, text);
      EXPECT_TRUE(set || flags(c, key)) << key << " = " << text;
    }
    tc::TrialConfig c;
    ASSERT_FALSE(tc::set_knob(c, key, "1e30"));
    EXPECT_TRUE(flags(c, key)) << key << " = 1e30";
    ASSERT_FALSE(tc::set_knob(c, key, "604800"));
    EXPECT_FALSE(flags(c, key)) << "a week is allowed";
  }
}

TEST(TrialConfigIntegers, ValuesThatWouldWrapAreProblems) {
  // 2^32 + 1 as an int is 1; 2^63 as an int64 is negative.
  tc::TrialConfig c;
  EXPECT_TRUE(tc::set_knob(c, "num_workers", "4294967297"));
  EXPECT_EQ(c.num_workers, tc::TrialConfig{}.num_workers) << "a refused value must not be stored";
  EXPECT_TRUE(tc::set_knob(c, "world_size", "4294967298"));
  EXPECT_EQ(c.world_size, 1);
  for (const auto& j :
       {nlohmann::json{{"world_size", 4294967298ull}}, nlohmann::json{{"steps", 9223372036854775808ull}},
        nlohmann::json{{"num_workers", -4294967295ll}}, nlohmann::json{{"dim", 18446744073709551615ull}}}) {
    const auto parsed = tc::from_json(j);
    EXPECT_FALSE(parsed.ok()) << j.dump();
  }
}

TEST(Validate, GroupedQueryAttentionNeedsKeyValueHeadsThatDivideTheHeads) {
  tc::TrialConfig c;
  c.model = "custom";
  c.dims = {4096, 2, 32, 11008, 32000};
  for (int64_t kv : {1, 2, 4, 8, 16, 32}) {
    c.dims.kv_heads = kv;
    EXPECT_FALSE(flags(c, "kv_heads")) << kv;
  }
  for (int64_t kv : {3, 5, 12, 64, -1}) {
    c.dims.kv_heads = kv;
    EXPECT_TRUE(flags(c, "kv_heads")) << kv;
  }
  c.dims.kv_heads = 5;
  bool named = false;
  for (const auto& p : tc::validate(c))
    if (p.key == "kv_heads") named = p.message.find("kv_heads 5 does not divide heads 32") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Validate, HeadSizeMustBeEvenAndAtMost256) {
  tc::TrialConfig c;
  c.model = "custom";
  c.dims = {3200, 2, 32, 8640, 32000};  // head size 100: supported (flash, padded to 104)
  EXPECT_FALSE(flags(c, "heads"));
  c.dims.heads = 64;  // 50
  EXPECT_FALSE(flags(c, "heads"));
  c.dims = {3136, 2, 32, 8640, 32000};  // 98
  EXPECT_FALSE(flags(c, "heads"));
  c.dims = {3168, 2, 32, 8640, 32000};  // 99: odd
  EXPECT_TRUE(flags(c, "heads"));
  c.dims = {8192, 2, 16, 8640, 32000};  // 512
  EXPECT_TRUE(flags(c, "heads"));
  c.dims = {8192, 2, 32, 8640, 32000};  // 256
  EXPECT_FALSE(flags(c, "heads"));
}

TEST(Validate, TiedEmbeddingsAreRefusedWithFsdp) {
  auto c = *tc::trial_preset("7b-fsdp");
  c.model = "custom";
  c.dims.tie_embeddings = true;
  EXPECT_TRUE(flags(c, "tie_embeddings"));
  c.strategy = tc::Strategy::Ddp;
  EXPECT_FALSE(flags(c, "tie_embeddings"));
}

TEST(Validate, RopeThetaMustBeAPositiveBase) {
  tc::TrialConfig c;
  c.model = "custom";
  for (double t : {0.0, -5.0, 1.0}) {
    c.dims.rope_theta = t;
    EXPECT_TRUE(flags(c, "rope_theta")) << t;
  }
  c.dims.rope_theta = 500000;
  EXPECT_FALSE(flags(c, "rope_theta"));
}

TEST(Validate, ForcedAttentionKernelsNeedWhatTheyRun) {
  tc::TrialConfig c;  // the CPU
  c.attention = tc::Attention::Flash;
  EXPECT_TRUE(flags(c, "attention"));
  c.attention = tc::Attention::Math;
  EXPECT_FALSE(flags(c, "attention"));
  c = *tc::trial_preset("7b-single");
  c.attention = tc::Attention::Cudnn;
  EXPECT_FALSE(flags(c, "attention"));
  c.amp = tc::Amp::Fp32;  // flash and cuDNN are 16-bit kernels
  EXPECT_TRUE(flags(c, "attention"));
  c.attention = tc::Attention::Efficient;
  EXPECT_FALSE(flags(c, "attention"));
  c = *tc::trial_preset("7b-single");
  c.model = "custom";
  c.dims = {3200, 2, 32, 8640, 32000};  // head size 100: handed padded to 104 in 16 bits
  c.attention = tc::Attention::Cudnn;
  EXPECT_FALSE(flags(c, "attention"));
  c.attention = tc::Attention::Flash;
  EXPECT_FALSE(flags(c, "attention"));
  c.attention = tc::Attention::Efficient;
  EXPECT_FALSE(flags(c, "attention"));
  c.amp = tc::Amp::Fp32;  // fp32 hands 100 unpadded: fine for the memory-efficient kernel (fours)
  EXPECT_FALSE(flags(c, "attention"));
  c.dims = {3136, 2, 32, 8640, 32000};  // head size 98: not in fours
  EXPECT_TRUE(flags(c, "attention"));
}

TEST(Validate, Fp8NeedsTheKeyValueProjectionInMultiplesOf16) {
  auto c = *tc::trial_preset("7b-single-fused");
  c.amp = tc::Amp::Fp8;
  c.model = "custom";
  EXPECT_FALSE(flags(c, "amp"));
  c.dims = {1536, 2, 24, 4096, 32000, 8};  // head size 64: q/k/v rows 1536 + 2 x 512
  EXPECT_FALSE(flags(c, "amp"));
  c.dims = {1200, 2, 12, 4096, 32000, 3};  // head size 100: 1200 + 2 x 300 = 1800, not a multiple of 16
  EXPECT_TRUE(flags(c, "amp"));
}

TEST(Validate, OptimizerInBackwardNeedsEveryGradientOnOneRank) {
  tc::TrialConfig c;
  c.optimizer_overlap = true;
  EXPECT_FALSE(flags(c, "optimizer_overlap"));
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"strategy", "ddp"}, {"strategy", "fsdp"}, {"grad_clip", "1.0"}, {"amp", "fp16"}, {"compile", "graph"},
           {"compile", "fused+graph"}}) {
    tc::TrialConfig bad = c;
    ASSERT_FALSE(tc::set_knob(bad, key, value)) << key;
    if (key == "strategy") bad.world_size = 2;
    if (key == "amp" || key == "compile") bad.device = tc::Device::Cuda;
    EXPECT_TRUE(flags(bad, "optimizer_overlap")) << key << "=" << value;
    bad.optimizer_overlap = false;
    EXPECT_FALSE(flags(bad, "optimizer_overlap")) << key << "=" << value;
  }
}

TEST(Validate, Bf16WeightGradsRunWhereTheFusedAdamwReadsThemOnOneRank) {
  tc::TrialConfig c;
  c.device = tc::Device::Cuda;
  ASSERT_FALSE(tc::set_knob(c, "compile", "fused"));
  ASSERT_FALSE(tc::set_knob(c, "amp", "bf16"));
  ASSERT_FALSE(tc::set_knob(c, "grad_dtype", "bf16"));
  EXPECT_FALSE(flags(c, "grad_dtype"));
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"strategy", "ddp"}, {"strategy", "fsdp"}, {"grad_accum", "2"}, {"amp", "fp8"}, {"amp", "fp16"},
           {"compile", "off"}, {"compile", "fused+graph"}, {"optimizer_overlap", "true"}, {"optimizer", "sgd"},
           {"fused_optimizer", "false"}}) {
    tc::TrialConfig bad = c;
    ASSERT_FALSE(tc::set_knob(bad, key, value)) << key;
    if (key == "strategy") bad.world_size = 2;
    EXPECT_TRUE(flags(bad, "grad_dtype")) << key << "=" << value;
    bad.grad_dtype = tc::DType::Fp32;
    EXPECT_FALSE(flags(bad, "grad_dtype")) << key << "=" << value;
  }
  tc::TrialConfig fp16 = c;
  fp16.grad_dtype = tc::DType::Fp16;  // the enum has it; the knob does not
  EXPECT_TRUE(flags(fp16, "grad_dtype"));
}
