#include "core/config/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/protocol/event_reader.h"  // json_nesting_within

namespace tunebench::config {

namespace {

using nlohmann::json;

constexpr const char* kKey = "hf_config";
constexpr const char* kRequired[] = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                                     "vocab_size"};
// Decoders whose blocks are the worker's: RMSNorm, rotary q/k, SwiGLU, no biases in the MLP.
constexpr const char* kLlamaFamily[] = {"llama", "mistral", "qwen2", "phi3"};

// transformers' default of tie_word_embeddings where a config leaves it out, by config class
// (LlamaConfig and most decoders: false; Gemma's: true). A model_type not listed takes
// PretrainedConfig's (true); a config without model_type, the LLaMA family's (the worker's blocks).
struct TieDefault {
  const char* model_type;
  bool tied;
};
constexpr TieDefault kTieDefaults[] = {
    {"llama", false},    {"mistral", false}, {"mixtral", false},   {"qwen2", false},       {"qwen2_moe", false},
    {"qwen3", false},    {"qwen3_moe", false}, {"phi3", false},    {"olmo", false},        {"olmo2", false},
    {"granite", false},  {"stablelm", false}, {"deepseek_v3", false}, {"gemma", true},    {"gemma2", true},
    {"gemma3_text", true}};

const TieDefault* tie_default_of(const std::string& model_type) {
  for (const auto& t : kTieDefaults)
    if (model_type == t.model_type) return &t;
  return nullptr;
}

std::string number_text(const json& v) {
  if (v.is_number_float()) {
    std::ostringstream s;
    s << v.get<double>();
    return s.str();
  }
  return v.dump();
}

bool present(const json& j, const char* key) { return j.contains(key) && !j.at(key).is_null(); }

// The language model's part of a config: multimodal configs nest it under text_config.
const json& language_part(const json& j, std::vector<std::string>& warnings) {
  if (!j.contains("hidden_size") && j.contains("text_config") && j.at("text_config").is_object()) {
    warnings.push_back("text_config: a multimodal config; only its language model is taken");
    return j.at("text_config");
  }
  return j;
}

void warn_unmodelled(const json& j, HfModel& m) {
  auto& w = m.warnings;
  if (present(j, "attention_bias") && j.at("attention_bias").is_boolean() && j.at("attention_bias").get<bool>())
    w.push_back("attention_bias: the q/k/v/o projections' biases are left out (the worker's linears have none)");
  else if (m.model_type == "qwen2")
    w.push_back("model_type 'qwen2': its q/k/v projections have biases, left out (the worker's linears have none)");
  if (present(j, "mlp_bias") && j.at("mlp_bias").is_boolean() && j.at("mlp_bias").get<bool>())
    w.push_back("mlp_bias: the feed-forward biases are left out");
  const bool sliding_used = !present(j, "use_sliding_window") || !j.at("use_sliding_window").is_boolean() ||
                            j.at("use_sliding_window").get<bool>();
  if (present(j, "sliding_window") && sliding_used)
    w.push_back("sliding_window " + number_text(j.at("sliding_window")) +
                ": attention here is full causal over the sequence (the same while seq_len fits in the window)");
  for (const char* experts : {"num_local_experts", "num_experts", "n_routed_experts"})
    if (present(j, experts) && j.at(experts).is_number() && j.at(experts).get<double>() > 0) {
      w.push_back(std::string(experts) + " " + number_text(j.at(experts)) +
                  ": a mixture of experts, modelled as one dense feed-forward of intermediate_size");
      break;
    }
  if (present(j, "rope_scaling")) {
    const json& r = j.at("rope_scaling");
    std::string type =
        r.is_object() && r.contains("rope_type") && r.at("rope_type").is_string() ? r.at("rope_type").get<std::string>()
        : r.is_object() && r.contains("type") && r.at("type").is_string()         ? r.at("type").get<std::string>()
                                                                                  : "";
    w.push_back("rope_scaling" + (type.empty() ? std::string() : " (" + type + ")") +
                ": plain rotary embeddings run instead (the same speed)");
  }
  if (present(j, "hidden_act") && j.at("hidden_act").is_string() && j.at("hidden_act").get<std::string>() != "silu")
    w.push_back("hidden_act '" + j.at("hidden_act").get<std::string>() + "': the feed-forward runs SwiGLU (silu)");
  // rms_norm_eps and other numerics that change no time or memory are not warned about.
  if (present(j, "partial_rotary_factor") && j.at("partial_rotary_factor").is_number() &&
      j.at("partial_rotary_factor").get<double>() != 1.0)
    w.push_back("partial_rotary_factor " + number_text(j.at("partial_rotary_factor")) +
                ": the whole head is rotated here");
  if (!m.model_type.empty()) {
    bool known = false;
    for (const char* t : kLlamaFamily) known = known || m.model_type == t;
    if (!known)
      w.push_back("model_type '" + m.model_type +
                  "': not a LLaMA-family decoder; only its shape fields were taken (RMSNorm, rotary, SwiGLU blocks "
                  "run)");
  }
}

}  // namespace

HfReadResult read_hf_config(const json& root, const std::string& source) {
  HfReadResult result;
  auto problem = [&](const std::string& message) { result.problems.push_back({kKey, source + ": " + message}); };
  if (!root.is_object()) {
    problem("not a Hugging Face model config (a JSON object with hidden_size, num_attention_heads, ...)");
    return result;
  }
  HfModel m;
  const json& j = language_part(root, m.warnings);
  std::vector<std::string> missing;
  for (const char* k : kRequired)
    if (!present(j, k)) missing.emplace_back(k);
  if (missing.size() == std::size(kRequired)) {
    const bool trial = root.contains("strategy") || root.contains("micro_batch") || root.contains("model");
    problem(std::string("not a Hugging Face model config: none of hidden_size, intermediate_size, num_hidden_layers, "
                        "num_attention_heads, vocab_size") +
            (trial ? " (it looks like a trial configuration: pass it with --config)" : ""));
    return result;
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    problem("missing " + names +
            " (a model config needs hidden_size, intermediate_size, num_hidden_layers, "
            "num_attention_heads and vocab_size)");
    return result;
  }
  auto integer = [&](const char* key, int64_t& out) {
    const json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      problem(std::string(key) + " must be a positive integer (got " + v.dump() + ")");
      return;
    }
    out = v.get<int64_t>();
  };
  ModelDims& d = m.dims;
  integer("hidden_size", d.dim);
  integer("intermediate_size", d.ffn);
  integer("num_hidden_layers", d.layers);
  integer("num_attention_heads", d.heads);
  integer("vocab_size", d.vocab);
  if (present(j, "model_type") && j.at("model_type").is_string())
    m.model_type = j.at("model_type").get<std::string>();
  else if (present(root, "model_type") && root.at("model_type").is_string())
    m.model_type = root.at("model_type").get<std::string>();
  // Every default taken for a field the config leaves out is named in a warning.
  const TieDefault* known = tie_default_of(m.model_type);
  const std::string arch = m.model_type.empty() ? std::string("the LLaMA family (no model_type)")
                           : known              ? "'" + m.model_type + "'"
                                                : "PretrainedConfig (model_type '" + m.model_type + "')";
  d.kv_heads = 0;
  if (present(j, "num_key_value_heads"))
    integer("num_key_value_heads", d.kv_heads);
  else
    m.warnings.push_back("num_key_value_heads not given: as many as num_attention_heads taken (multi-head attention)");
  d.tie_embeddings = known ? known->tied : !m.model_type.empty();
  if (present(j, "tie_word_embeddings")) {
    if (j.at("tie_word_embeddings").is_boolean())
      d.tie_embeddings = j.at("tie_word_embeddings").get<bool>();
    else
      problem("tie_word_embeddings must be true or false (got " + j.at("tie_word_embeddings").dump() + ")");
  } else {
    m.warnings.push_back(std::string("tie_word_embeddings not given: ") + arch + "'s default (" +
                         (d.tie_embeddings ? "true" : "false") + ") taken");
  }
  d.rope_theta = 10000.0;
  const json* theta = present(j, "rope_theta") ? &j.at("rope_theta") : nullptr;
  if (!theta && present(j, "rope_parameters") && j.at("rope_parameters").is_object() &&
      present(j.at("rope_parameters"), "rope_theta"))
    theta = &j.at("rope_parameters").at("rope_theta");
  if (theta) {
    if (theta->is_number() && std::isfinite(theta->get<double>()) && theta->get<double>() > 0)
      d.rope_theta = theta->get<double>();
    else
      problem("rope_theta must be a positive number (got " + theta->dump() + ")");
  } else {
    m.warnings.push_back("rope_theta not given: 10000 taken (the default of " + arch + ")");
  }
  if (!result.problems.empty()) return result;
  if (d.heads > 0 && d.dim % d.heads == 0 && present(j, "head_dim") && j.at("head_dim").is_number_integer() &&
      j.at("head_dim").get<int64_t>() != d.head_dim()) {
    problem("head_dim " + j.at("head_dim").dump() + " differs from hidden_size / num_attention_heads = " +
            std::to_string(d.head_dim()) + "; the worker's heads are hidden_size / num_attention_heads wide");
    return result;
  }
  if (d.kv_heads == d.heads) d.kv_heads = 0;  // multi-head attention, as the presets write it
  warn_unmodelled(j, m);
  m.preset = "custom";
  for (const auto& name : model_preset_names())
    if (const auto p = model_preset(name); p && *p == d) {
      m.preset = name;
      d = *p;  // the preset's own spelling (kv_heads 0 for multi-head attention)
      break;
    }
  result.model = std::move(m);
  return result;
}

HfReadResult read_hf_config_file(const std::string& path) {
  HfReadResult result;
  auto problem = [&](const std::string& message) {
    result.problems.push_back({kKey, message});
    return result;
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return problem("cannot read " + path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) return problem(path + " is not a regular file; give a config.json");
  if (std::filesystem::file_size(path, ec) > (4u << 20))
    return problem(path + " is larger than 4 MiB: not a model config.json (weights or a tokenizer?)");
  std::ifstream in(path, std::ios::binary);
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    in.setstate(std::ios::badbit);
  }
  if (!in && !in.eof()) return problem("cannot read " + path);
  json j;
  if (!protocol::json_nesting_within(text, 64) ||
      (j = json::parse(text, nullptr, /*allow_exceptions=*/false)).is_discarded())
    return problem(path + " is not valid JSON");
  return read_hf_config(j, std::filesystem::path(path).filename().string());
}

void apply_hf_model(TrialConfig& config, const HfModel& model) {
  config.model = model.preset;
  config.dims = model.dims;
}

}  // namespace tunebench::config
