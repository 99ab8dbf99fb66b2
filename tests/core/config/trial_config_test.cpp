// TrialConfig: defaults, presets, JSON round trip, text setters.
#include <gtest/gtest.h>

#include "core/config/trial_config.h"

namespace tc = tunebench::config;

TEST(TrialConfig, DefaultsAreAValidCpuSmokeTest) {
  tc::TrialConfig c;
  EXPECT_TRUE(tc::validate(c).empty()) << tc::describe(tc::validate(c));
  EXPECT_EQ(c.model, "tiny");
  EXPECT_EQ(c.strategy, tc::Strategy::Single);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_EQ(c.bucket_mb, 25.0);
  EXPECT_EQ(c.tokens_per_rank_step(), c.micro_batch * c.seq_len * c.grad_accum);
}

TEST(TrialConfig, ModelPresetsMatchTheReference) {
  const auto b7 = tc::model_preset("7b");
  ASSERT_TRUE(b7);
  EXPECT_EQ(b7->dim, 4096);
  EXPECT_EQ(b7->layers, 32);
  EXPECT_EQ(b7->heads, 32);
  EXPECT_EQ(b7->ffn, 11008);
  EXPECT_EQ(b7->vocab, 32000);
  EXPECT_TRUE(tc::model_preset("1b"));
  EXPECT_TRUE(tc::model_preset("125m"));
  EXPECT_FALSE(tc::model_preset("custom"));
  EXPECT_FALSE(tc::model_preset("13b"));
}

TEST(TrialConfig, EveryTrialPresetIsValid) {
  ASSERT_GE(tc::trial_presets().size(), 5u);
  for (const auto& p : tc::trial_presets()) {
    EXPECT_TRUE(tc::validate(p.config).empty()) << p.name << ": " << tc::describe(tc::validate(p.config));
    EXPECT_FALSE(p.description.empty());
  }
  EXPECT_TRUE(tc::trial_preset("7b-fsdp"));
  EXPECT_FALSE(tc::trial_preset("nope"));
}

TEST(TrialConfig, JsonRoundTripOfEveryKnob) {
  tc::TrialConfig c;
  c.name = "round trip";
  c.model = "custom";
  c.dims = {512, 6, 8, 1376, 1000, 2, true, 500000.0};
  c.attention = tc::Attention::Flash;
  c.micro_batch = 3;
  c.seq_len = 77;
  c.grad_accum = 5;
  c.data = tc::DataSource::File;
  c.data_path = "/tmp/tokens.bin";
  c.token_dtype = tc::TokenDtype::Uint32;
  c.num_workers = 6;
  c.pin_memory = true;
  c.sample_cpu_us = 123.5;
  c.strategy = tc::Strategy::Fsdp;
  c.world_size = 4;
  c.device = tc::Device::Cuda;
  c.amp = tc::Amp::PureBf16;
  c.cudnn_benchmark = true;
  c.checkpointing = true;
  c.compile = tc::Compile::FusedGraph;
  c.optimizer = tc::Optimizer::Sgd;
  c.fused_optimizer = false;
  c.lr = 0.5;
  c.weight_decay = 0.1;
  c.grad_clip = 1.0;
  c.bucket_mb = 50;
  c.first_bucket_mb = 2;
  c.ddp_overlap = false;
  c.compression = tc::Compression::Bf16;
  c.fsdp_mode = tc::FsdpMode::ShardGradOp;
  c.fsdp_prefetch = false;
  c.fsdp_param_dtype = tc::DType::Fp16;
  c.fsdp_reduce_dtype = tc::DType::Bf16;
  c.nccl_env = {{"NCCL_ALGO", "Tree"}, {"NCCL_P2P_DISABLE", "1"}};
  c.steps = 9;
  c.warmup = 4;
  c.seed = 1234567890123ULL;
  c.timing = false;
  c.gpu_sample_hz = 20;
  c.rendezvous_timeout_s = 5;
  c.collective_timeout_s = 7;
  const auto j = tc::to_json(c);
  const auto back = tc::from_json(j);
  EXPECT_TRUE(back.ok()) << tc::describe(back.problems);
  EXPECT_TRUE(back.config == c);
  EXPECT_EQ(tc::to_json(back.config), j);
  EXPECT_TRUE(tc::differing_knobs(c, back.config).empty());
  // every knob the form shows is in the JSON and vice versa, but for what the probe records of a
  // script (script_batch_unit: what its batches count in), which nobody sets
  for (const auto& k : tc::knobs()) EXPECT_TRUE(j.contains(k.key)) << k.key;
  EXPECT_TRUE(j.contains("script_batch_unit"));
  EXPECT_EQ(j.size(), tc::knobs().size() + 1);
}

TEST(TrialConfig, PublicModelPresetsCarryTheirAttentionAndEmbeddingShapes) {
  const auto l31 = *tc::model_preset("llama3.1-8b");
  EXPECT_EQ(l31.kv_head_count(), 8);
  EXPECT_EQ(l31.kv_dim(), 1024);
  EXPECT_EQ(l31.qkv_dim(), 4096 + 2048);
  EXPECT_EQ(l31.vocab, 128256);
  EXPECT_EQ(l31.rope_theta, 500000.0);
  EXPECT_EQ(tc::model_preset("qwen2.5-7b")->kv_head_count(), 4);
  EXPECT_EQ(tc::model_preset("phi3-mini")->head_dim(), 96);
  const auto l32 = *tc::model_preset("llama3.2-1b");
  EXPECT_EQ(l32.head_dim(), 64);
  EXPECT_TRUE(l32.tie_embeddings);
  // 7b stays LLaMA-2-7B: multi-head attention (kv_heads 0 means as many as heads)
  const auto b7 = *tc::model_preset("7b");
  EXPECT_EQ(b7.kv_heads, 0);
  EXPECT_EQ(b7.kv_head_count(), 32);
  EXPECT_FALSE(b7.tie_embeddings);
  // kv_heads 0 and kv_heads == heads are the same network
  auto explicit_mha = b7;
  explicit_mha.kv_heads = 32;
  EXPECT_TRUE(explicit_mha == b7);
  for (const auto& name : tc::model_preset_names()) {
    if (name == "custom") continue;
    tc::TrialConfig c;
    ASSERT_FALSE(tc::set_knob(c, "model", name)) << name;
    c.device = tc::Device::Cuda;
    EXPECT_TRUE(tc::validate(c).empty()) << name << ": " << tc::describe(tc::validate(c));
  }
}

TEST(TrialConfig, ConfigsWithoutTheNewerModelKnobsKeepTheirMeaning) {
  // A custom model stored before kv_heads, tie_embeddings and rope_theta existed is multi-head,
  // untied, base 10000, whatever the defaults it is read over.
  tc::TrialConfig base;
  base.dims = *tc::model_preset("llama3.2-1b");
  const auto r = tc::from_json(
      {{"model", "custom"}, {"dim", 3200}, {"layers", 26}, {"heads", 32}, {"ffn", 8640}, {"vocab", 32000}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.dims.kv_head_count(), 32);
  EXPECT_FALSE(r.config.dims.tie_embeddings);
  EXPECT_EQ(r.config.dims.rope_theta, 10000.0);
  EXPECT_EQ(r.config.attention, tc::Attention::Auto);
}

TEST(TrialConfig, PresetNameSetsDims) {
  const auto r = tc::from_json({{"model", "7b"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.dims.dim, 4096);
  EXPECT_EQ(r.config.dims.layers, 32);
}

TEST(TrialConfig, UnknownKeysAndWrongTypesAreProblems) {
  const auto r = tc::from_json({{"micro_batch", "four"},
                                {"bucket_size", 25},
                                {"amp", "fp4"},
                                {"pin_memory", 1},
                                {"model", "13b"},
                                {"nccl_env", {{"NCCL_ALGO", {1, 2}}}}});
  EXPECT_EQ(r.problems.size(), 6u) << tc::describe(r.problems);
  auto has = [&](const std::string& key) {
    for (const auto& p : r.problems)
      if (p.key == key) return true;
    return false;
  };
  EXPECT_TRUE(has("micro_batch"));
  EXPECT_TRUE(has("bucket_size"));
  EXPECT_TRUE(has("amp"));
  EXPECT_TRUE(has("pin_memory"));
  EXPECT_TRUE(has("model"));
  EXPECT_TRUE(has("nccl_env"));
  EXPECT_FALSE(tc::from_json(nlohmann::json::array()).ok());
}

TEST(TrialConfig, SetKnobFromText) {
  tc::TrialConfig c;
  EXPECT_FALSE(tc::set_knob(c, "micro_batch", "8"));
  EXPECT_EQ(c.micro_batch, 8);
  EXPECT_FALSE(tc::set_knob(c, "amp", "bf16"));
  EXPECT_EQ(c.amp, tc::Amp::Bf16);
  EXPECT_FALSE(tc::set_knob(c, "pin_memory", "on"));
  EXPECT_TRUE(c.pin_memory);
  EXPECT_FALSE(tc::set_knob(c, "bucket_mb", "12.5"));
  EXPECT_EQ(c.bucket_mb, 12.5);
  EXPECT_FALSE(tc::set_knob(c, "nccl_env", "NCCL_ALGO=Ring,NCCL_PROTO=Simple"));
  EXPECT_EQ(c.nccl_env.size(), 2u);
  EXPECT_EQ(tc::knob_text(c, "nccl_env"), "NCCL_ALGO=Ring,NCCL_PROTO=Simple");
  EXPECT_EQ(tc::knob_text(c, "amp"), "bf16");
  EXPECT_EQ(tc::knob_text(c, "micro_batch"), "8");
  EXPECT_FALSE(tc::set_knob(c, "model", "7b"));
  EXPECT_EQ(c.dims.dim, 4096);

  EXPECT_TRUE(tc::set_knob(c, "micro_batch", "8x"));
  EXPECT_TRUE(tc::set_knob(c, "micro_batch", ""));
  EXPECT_TRUE(tc::set_knob(c, "micro_batch", "99999999999999999999999"));
  EXPECT_TRUE(tc::set_knob(c, "pin_memory", "maybe"));
  EXPECT_TRUE(tc::set_knob(c, "amp", "fp4"));
  EXPECT_TRUE(tc::set_knob(c, "nccl_env", "=1"));
  EXPECT_TRUE(tc::set_knob(c, "no_such_knob", "1"));
  EXPECT_EQ(c.micro_batch, 8) << "a rejected text leaves the knob unchanged";
}

TEST(TrialConfig, DifferingKnobsListsOnlyChanges) {
  tc::TrialConfig a, b;
  b.name = "other name";
  EXPECT_TRUE(tc::differing_knobs(a, b).empty()) << "the name is not a knob";
  b.micro_batch = 16;
  b.compression = tc::Compression::Fp16;
  const auto d = tc::differing_knobs(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "micro_batch");
  EXPECT_EQ(d[1], "compression");
}

TEST(TrialConfig, EveryKnobHasHelpAndAGroup) {
  for (const auto& k : tc::knobs()) {
    EXPECT_FALSE(k.help.empty()) << k.key;
    EXPECT_FALSE(k.group.empty()) << k.key;
    EXPECT_FALSE(k.label.empty()) << k.key;
    if (k.type == tc::KnobType::Choice) {
      EXPECT_FALSE(k.choices.empty()) << k.key;
    }
  }
  const auto* compile = tc::find_knob("compile");
  ASSERT_TRUE(compile);
  EXPECT_NE(compile->help.find("no torch.compile"), std::string::npos);
}

TEST(TrialConfig, CompileIsAChoiceAndOlderBoolsKeepTheirMeaning) {
  // Sessions written before the fused kernels stored a bool; true was CUDA-graph capture.
  auto old = tc::from_json(nlohmann::json{{"compile", true}});
  ASSERT_TRUE(old.ok()) << tc::describe(old.problems);
  EXPECT_EQ(old.config.compile, tc::Compile::Graph);
  EXPECT_EQ(tc::from_json(nlohmann::json{{"compile", false}}).config.compile, tc::Compile::Off);

  tc::TrialConfig c;
  EXPECT_FALSE(tc::set_knob(c, "compile", "fused+graph"));
  EXPECT_EQ(c.compile, tc::Compile::FusedGraph);
  EXPECT_EQ(tc::knob_text(c, "compile"), "fused+graph");
  EXPECT_EQ(tc::from_json(tc::to_json(c)).config.compile, tc::Compile::FusedGraph);
  EXPECT_TRUE(tc::set_knob(c, "compile", "fast"));  // not a choice: a problem, not a silent default
  EXPECT_EQ(c.compile, tc::Compile::FusedGraph);
  EXPECT_FALSE(tc::set_knob(c, "amp", "fp8"));
  EXPECT_EQ(c.amp, tc::Amp::Fp8);
}

TEST(TrialConfig, WhereKnobsApplyToTheirLaunchersOnly) {
  using L = tc::Launcher;
  for (const char* k : {"ssh_hosts", "ssh_command", "master_addr"}) {
    EXPECT_TRUE(tc::knob_applies(k, L::Ssh)) << k;
    EXPECT_FALSE(tc::knob_applies(k, L::Local)) << k;
    EXPECT_FALSE(tc::knob_applies(k, L::Slurm)) << k;
  }
  for (const auto& k : tc::knobs()) {
    if (k.key.rfind("slurm_", 0) != 0 && k.key != "event_host") continue;
    EXPECT_TRUE(tc::knob_applies(k.key, L::Slurm)) << k.key;
    EXPECT_FALSE(tc::knob_applies(k.key, L::Local)) << k.key;
    EXPECT_FALSE(tc::knob_applies(k.key, L::Ssh)) << k.key;
  }
  for (const char* k : {"remote_worker", "remote_env"}) {
    EXPECT_FALSE(tc::knob_applies(k, L::Local)) << k;
    EXPECT_TRUE(tc::knob_applies(k, L::Ssh)) << k;
    EXPECT_TRUE(tc::knob_applies(k, L::Slurm)) << k;
  }
  // The launcher itself and every knob outside the Where group apply everywhere.
  for (const auto& k : tc::knobs()) {
    if (k.group == "Where" && k.key != "launcher") continue;
    for (L l : {L::Local, L::Ssh, L::Slurm}) EXPECT_TRUE(tc::knob_applies(k.key, l)) << k.key;
  }
}
