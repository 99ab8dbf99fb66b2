// Hugging Face config.json files onto the model's shape: the public models' own configs give their
// presets, what the worker cannot model is named, and files that are no model config are refused
// with the field or the file named.
#include "core/config/hf_config.h"

#include <gtest/gtest.h>

#include <fstream>

namespace tc = tunebench::config;
using nlohmann::json;

namespace {

// The shape fields of meta-llama/Llama-3.1-8B's config.json, as published.
json llama31_8b() {
  return json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072,
    "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "transformers_version": "4.43.0.dev0", "use_cache": true, "vocab_size": 128256})");
}

bool warns_about(const tc::HfModel& m, const std::string& field) {
  for (const auto& w : m.warnings)
    if (w.rfind(field, 0) == 0) return true;
  return false;
}

std::string problems(const tc::HfReadResult& r) { return tc::describe(r.problems); }

}  // namespace

TEST(HfConfig, Llama31ConfigIsTheLlama31Preset) {
  const auto r = tc::read_hf_config(llama31_8b());
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_EQ(r.model->preset, "llama3.1-8b");
  EXPECT_TRUE(r.model->dims == *tc::model_preset("llama3.1-8b"));
  EXPECT_EQ(r.model->model_type, "llama");
  // RoPE scaling is named, not dropped; nothing else of this config is out of reach.
  EXPECT_TRUE(warns_about(*r.model, "rope_scaling (llama3)"));
  EXPECT_EQ(r.model->warnings.size(), 1u);
  tc::TrialConfig c;
  tc::apply_hf_model(c, *r.model);
  EXPECT_EQ(c.model, "llama3.1-8b");
  EXPECT_EQ(c.dims.kv_head_count(), 8);
}

TEST(HfConfig, EveryPublicPresetReadsBackFromItsConfig) {
  const std::map<std::string, json> configs = {
      {"mistral-7b", json::parse(R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32768,
        "rope_theta": 1000000.0, "sliding_window": null, "tie_word_embeddings": false, "hidden_act": "silu",
        "rms_norm_eps": 1e-05, "head_dim": 128})")},
      {"qwen2.5-7b", json::parse(R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "rope_theta": 1000000.0, "sliding_window": 131072, "use_sliding_window": false, "max_window_layers": 28,
        "tie_word_embeddings": false, "hidden_act": "silu", "rms_norm_eps": 1e-06})")},
      {"phi3-mini", json::parse(R"({"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064,
        "rope_theta": 10000.0, "sliding_window": 2047, "tie_word_embeddings": false, "hidden_act": "silu",
        "rms_norm_eps": 1e-05})")},
      {"llama3.2-1b", json::parse(R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
        "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "rope_theta": 500000.0, "tie_word_embeddings": true, "hidden_act": "silu", "rms_norm_eps": 1e-05,
        "head_dim": 64, "rope_scaling": {"rope_type": "llama3", "factor": 32.0}})")},
  };
  for (const auto& [preset, j] : configs) {
    const auto r = tc::read_hf_config(j);
    ASSERT_TRUE(r.model) << preset << ": " << problems(r);
    EXPECT_EQ(r.model->preset, preset);
  }
  // What each of them cannot carry over is said by field name.
  EXPECT_TRUE(warns_about(*tc::read_hf_config(configs.at("qwen2.5-7b")).model, "model_type 'qwen2'"));  // q/k/v biases
  // An epsilon changes no time or memory: not worth a warning (issue 44).
  EXPECT_FALSE(warns_about(*tc::read_hf_config(configs.at("qwen2.5-7b")).model, "rms_norm_eps"));
  EXPECT_FALSE(warns_about(*tc::read_hf_config(configs.at("qwen2.5-7b")).model, "sliding_window"))
      << "use_sliding_window false: no window is used";
  EXPECT_TRUE(warns_about(*tc::read_hf_config(configs.at("phi3-mini")).model, "sliding_window 2047"));
  EXPECT_TRUE(tc::read_hf_config(configs.at("mistral-7b")).model->warnings.empty());
}

TEST(HfConfig, WhatTheModelCannotExpressIsNamedInWarnings) {
  // Mixtral: a mixture of experts; an older Mistral: a sliding window; biases; another activation.
  json j = llama31_8b();
  j["rope_scaling"] = nullptr;
  j["num_local_experts"] = 8;
  j["sliding_window"] = 4096;
  j["attention_bias"] = true;
  j["mlp_bias"] = true;
  j["hidden_act"] = "gelu";
  j["model_type"] = "mixtral";
  j["vocab_size"] = 32000;
  const auto r = tc::read_hf_config(j);
  ASSERT_TRUE(r.model) << problems(r);
  for (const char* field : {"num_local_experts 8", "sliding_window 4096", "attention_bias", "mlp_bias",
                            "hidden_act 'gelu'", "model_type 'mixtral'"})
    EXPECT_TRUE(warns_about(*r.model, field)) << field;
  EXPECT_EQ(r.model->preset, "custom");
}

TEST(HfConfig, MissingFieldsAndUnrelatedFilesAreRefusedByName) {
  json j = llama31_8b();
  j.erase("num_hidden_layers");
  j.erase("vocab_size");
  auto r = tc::read_hf_config(j, "my.json");
  ASSERT_FALSE(r.model);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].key, "hf_config");
  EXPECT_NE(r.problems[0].message.find("my.json: missing num_hidden_layers, vocab_size"), std::string::npos)
      << r.problems[0].message;

  r = tc::read_hf_config(json::parse(R"({"model": "7b", "strategy": "ddp", "micro_batch": 2})"));
  ASSERT_FALSE(r.model);
  EXPECT_NE(problems(r).find("not a Hugging Face model config"), std::string::npos);
  EXPECT_NE(problems(r).find("--config"), std::string::npos) << "a trial config is told where it belongs";

  r = tc::read_hf_config(json::array({1, 2}));
  EXPECT_FALSE(r.model);
  EXPECT_NE(problems(r).find("not a Hugging Face model config"), std::string::npos);

  j = llama31_8b();
  j["hidden_size"] = "4096";
  r = tc::read_hf_config(j);
  ASSERT_FALSE(r.model);
  EXPECT_NE(problems(r).find("hidden_size must be a positive integer"), std::string::npos);

  j = llama31_8b();
  j["num_attention_heads"] = 0;
  EXPECT_FALSE(tc::read_hf_config(j).model);

  // Mistral-Nemo's head_dim 128 with 5120 / 32 = 160: heads the worker's attention cannot have.
  j = llama31_8b();
  j["hidden_size"] = 5120;
  j["head_dim"] = 128;
  r = tc::read_hf_config(j);
  ASSERT_FALSE(r.model);
  EXPECT_NE(problems(r).find("head_dim 128 differs from hidden_size / num_attention_heads = 160"), std::string::npos);
}

TEST(HfConfig, OptionalFieldsTakeTheLlamaFamilysDefaults) {
  const auto r = tc::read_hf_config(json::parse(R"({"hidden_size": 512, "intermediate_size": 1376,
      "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 1000})"));
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_EQ(r.model->dims.kv_head_count(), 8);
  EXPECT_FALSE(r.model->dims.tie_embeddings);
  EXPECT_EQ(r.model->dims.rope_theta, 10000.0);
  EXPECT_EQ(r.model->preset, "custom");
  // Each default is named (issue 44), nothing else is said.
  ASSERT_EQ(r.model->warnings.size(), 3u);
  EXPECT_TRUE(warns_about(*r.model, "tie_word_embeddings not given: the LLaMA family (no model_type)'s default (false)"));
}

TEST(HfConfig, MultimodalConfigsGiveTheirLanguageModel) {
  json outer = {{"model_type", "mllama"}, {"vision_config", {{"hidden_size", 1280}}}, {"text_config", llama31_8b()}};
  const auto r = tc::read_hf_config(outer);
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_EQ(r.model->dims.dim, 4096);
  EXPECT_TRUE(warns_about(*r.model, "text_config"));
}

TEST(HfConfig, FilesThatAreNoJsonAreProblemsNotCrashes) {
  const std::string dir = ::testing::TempDir();
  EXPECT_NE(problems(tc::read_hf_config_file(dir + "/does-not-exist.json")).find("no such file"), std::string::npos);
  EXPECT_NE(problems(tc::read_hf_config_file(dir)).find("not a regular file"), std::string::npos);
  const std::string bad = dir + "/hf-bad.json";
  std::ofstream(bad) << "{\"hidden_size\": 40";
  EXPECT_NE(problems(tc::read_hf_config_file(bad)).find("not valid JSON"), std::string::npos);
  const std::string deep = dir + "/hf-deep.json";
  std::ofstream(deep) << std::string(100000, '[') << std::string(100000, ']');
  EXPECT_NE(problems(tc::read_hf_config_file(deep)).find("not valid JSON"), std::string::npos);
  const std::string good = dir + "/hf-good.json";
  std::ofstream(good) << llama31_8b().dump();
  const auto r = tc::read_hf_config_file(good);
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_EQ(r.model->preset, "llama3.1-8b");
}

// Issue 44: a config without tie_word_embeddings took "untied" whatever the architecture (Gemma
// ties); every default taken is named.
TEST(HfConfig, AFieldLeftOutTakesItsArchitecturesDefaultAndSaysSo) {
  json j = llama31_8b();
  j.erase("tie_word_embeddings");
  j.erase("rope_theta");
  j.erase("num_key_value_heads");
  auto r = tc::read_hf_config(j);
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_FALSE(r.model->dims.tie_embeddings);
  EXPECT_TRUE(warns_about(*r.model, "tie_word_embeddings not given: 'llama''s default (false) taken"));
  EXPECT_TRUE(warns_about(*r.model, "rope_theta not given: 10000 taken"));
  EXPECT_TRUE(warns_about(*r.model, "num_key_value_heads not given"));
  EXPECT_DOUBLE_EQ(r.model->dims.rope_theta, 10000.0);
  EXPECT_EQ(r.model->dims.kv_heads, 0);

  j["model_type"] = "gemma";
  r = tc::read_hf_config(j);
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_TRUE(r.model->dims.tie_embeddings);
  EXPECT_TRUE(warns_about(*r.model, "tie_word_embeddings not given: 'gemma''s default (true) taken"));

  j["model_type"] = "exaone";  // a type without a class default here: transformers' PretrainedConfig ties
  r = tc::read_hf_config(j);
  ASSERT_TRUE(r.model) << problems(r);
  EXPECT_TRUE(r.model->dims.tie_embeddings);
  EXPECT_TRUE(warns_about(*r.model, "tie_word_embeddings not given: PretrainedConfig (model_type 'exaone')'s default (true)"));

  // Given, nothing is said of it.
  j = llama31_8b();
  r = tc::read_hf_config(j);
  ASSERT_TRUE(r.model);
  EXPECT_FALSE(warns_about(*r.model, "not given"));
}
