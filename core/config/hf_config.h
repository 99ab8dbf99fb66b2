// A model's shape from a Hugging Face config.json (`--hf-config`, the form's "Model from
// config.json..."): the LLaMA family's standard fields onto ModelDims.
//
// Read: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, vocab_size (all
// required), num_key_value_heads (absent: as many as the heads), tie_word_embeddings (absent:
// false, the LLaMA family's default), rope_theta (absent: 10000), head_dim (only checked: it must
// be hidden_size / num_attention_heads, the one head size this model has).
// Named in a warning, never dropped silently: what the worker's decoder cannot express (biases,
// sliding windows, mixtures of experts, RoPE scaling, another activation or norm epsilon, a
// model_type outside the LLaMA family). A file that is no model config, or lacks a field, is a
// problem with the field named. Deliberately absent: downloading a config by model name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"

namespace tunebench::config {

struct HfModel {
  ModelDims dims;
  std::string model_type;             // "llama", "mistral", "qwen2", ... (empty when absent)
  std::string preset;                 // the model preset with exactly these dims, or "custom"
  std::vector<std::string> warnings;  // one sentence each, starting with the field's name
};

struct HfReadResult {
  std::optional<HfModel> model;
  std::vector<Problem> problems;  // key "hf_config"; empty when model is set
};

// `source` names the file in messages ("config.json").
HfReadResult read_hf_config(const nlohmann::json& j, const std::string& source = "config.json");
// Reads and parses a file (at most 4 MiB) first; unreadable or non-JSON files are problems too.
HfReadResult read_hf_config_file(const std::string& path);

// The config's model becomes `model`'s: its dims, and the matching preset's name or "custom".
void apply_hf_model(TrialConfig& config, const HfModel& model);

}  // namespace tunebench::config
