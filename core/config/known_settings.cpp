#include "core/config/known_settings.h"

#include "core/config/script.h"

#include <algorithm>

namespace tunebench::config {
namespace {

// Knobs added after sessions were first written, with what the workers of before ran: a config
// the worker wrote then lacks them, and they are known all the same (as the Where group below).
bool added_later(std::string_view key) {
  return key == "kv_heads" || key == "tie_embeddings" || key == "rope_theta" || key == "attention" ||
         key == "optimizer_overlap" || key == "grad_dtype";
}

// Kernel sampling is how the worker observed the run, not what it trained: configs written before
// it existed lack the keys, and a trace's profiler recorded every step anyway. Always known.
bool how_observed(std::string_view key) { return key == "kernel_sample_every" || key == "kernel_sample_steps"; }

// A worker writes every knob of its time; an imported trace's config holds only what was read off
// the trace or typed in. So a config holding every knob but the later ones is a worker's.
bool written_by_worker(const nlohmann::json& config_json) {
  if (!config_json.is_object()) return false;
  for (const auto& k : knobs())
    if (k.group != "Where" && k.group != "Your script" && !added_later(k.key) && !how_observed(k.key) &&
        !config_json.contains(k.key))
      return false;
  return true;
}

// A config of the user's own script (script.h): its "script" key names one.
bool is_script_json(const nlohmann::json& config_json) {
  if (!config_json.is_object()) return false;
  const auto it = config_json.find("script");
  return it != config_json.end() && it->is_string() && !it->get<std::string>().empty();
}

bool same(const Problem& a, const Problem& b) { return a.key == b.key && a.message == b.message; }

}  // namespace

std::vector<std::string> unknown_knobs(const nlohmann::json& config_json) {
  std::vector<std::string> out;
  for (const auto& k : knobs())
    if (!is_known(config_json, k.key)) out.push_back(k.key);
  return out;
}

bool is_known(const nlohmann::json& config_json, std::string_view key) {
  if (key == "name") return true;
  // Samples per step is in the script's group (the benchmark's form never shows it) but belongs to
  // any trial that counts samples: an imported trace knows it once the user gives it; a worker's
  // config (0: the benchmark counts tokens) knows it always.
  if (key == "samples_per_step")
    return (config_json.is_object() && config_json.contains("samples_per_step")) || written_by_worker(config_json);
  // Where a trial ran (launcher, hosts, SLURM) is not a knob of the training it measured, and
  // configs written before launchers existed lack those keys: absent means it ran here.
  if (const KnobInfo* k = find_knob(key); k && k->group == "Where") return true;
  // The script's fields mean nothing to the benchmark (and its configs of before lack them).
  if (const KnobInfo* k = find_knob(key); k && k->group == "Your script" && !is_script_json(config_json)) return true;
  if (how_observed(key)) return true;
  if (config_json.is_object() && config_json.contains(std::string(key))) return true;
  return added_later(key) && written_by_worker(config_json);
}

std::vector<Problem> set_known_setting(nlohmann::json& config_json, std::string_view key, std::string_view text) {
  const nlohmann::json before_json = config_json.is_object() ? config_json : nlohmann::json::object();
  ParseResult parsed = from_json(before_json);
  if (!parsed.ok()) return parsed.problems;
  TrialConfig config = parsed.config;
  const std::vector<Problem> before = validate(config);
  if (auto p = set_knob(config, key, text)) return {*p};

  nlohmann::json after_json = before_json;
  const nlohmann::json full = to_json(config);
  after_json[std::string(key)] = full.at(std::string(key));
  if (key == "model" && config.model != "custom")
    for (const auto& dim : model_dim_keys()) after_json[dim] = full.at(dim);

  std::vector<Problem> out;
  for (auto& p : validate(config)) {
    if (!p.key.empty() && !is_known(after_json, p.key)) continue;
    const bool is_new = std::none_of(before.begin(), before.end(), [&](const Problem& b) { return same(b, p); });
    if (p.key == key || is_new) out.push_back(std::move(p));
  }
  if (out.empty()) config_json = std::move(after_json);
  return out;
}

nlohmann::json recorded_json(const TrialConfig& config) {
  nlohmann::json full = to_json(config);
  if (!is_script(config)) return full;
  const auto named = template_keys(config.script_args);
  nlohmann::json out = nlohmann::json::object();
  for (auto it = full.begin(); it != full.end(); ++it) {
    const std::string& key = it.key();
    const bool applied = std::find(config.script_knobs.begin(), config.script_knobs.end(), key) != config.script_knobs.end();
    const bool in_args = std::find(named.begin(), named.end(), key) != named.end();
    if (is_script_trial_knob(key) || applied || in_args) out[key] = it.value();
  }
  return out;
}

void forget_setting(nlohmann::json& config_json, std::string_view key) {
  if (config_json.is_object() && key != "name") config_json.erase(std::string(key));
}

}  // namespace tunebench::config
