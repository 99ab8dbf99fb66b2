// Known settings: a trial configuration of which only some knobs are known.
//
// A trial imported from someone else's training script (a torch.profiler trace) has knob values
// nobody can read off the trace. Its config JSON holds only the keys that are known, read off the
// trace or typed in by the user; a knob key absent from a config JSON is unknown. The worker
// always writes every key (to_json), so configs of native trials are fully known and nothing
// changes for them; knobs added since (kv_heads, tie_embeddings, rope_theta, attention) are known
// in a worker's older config too, as what it ran (multi-head, untied, 10000, PyTorch's choice). This is the one place
// that says which knobs of a config are known and that sets one, through the same set_knob() and validate() as the
// form, the CLI and the worker.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"

namespace tunebench::config {

// Keys of knobs() that `config_json` does not hold, in knobs() order ("name", the "Where" group,
// where a trial ran, and the kernel sampling, how it was observed, are never unknown). Empty for a
// config the worker wrote.
std::vector<std::string> unknown_knobs(const nlohmann::json& config_json);
bool is_known(const nlohmann::json& config_json, std::string_view key);

// Sets `key` from `text` in a config of known settings. The text is parsed by set_knob(); then
// validate() runs on the config with defaults standing in for unknown knobs, and a problem is
// reported when it is about a known knob and either about `key` itself or new with this change
// (problems that only defaults cause are not the user's to fix). Without problems the key (for a
// model preset also its dimensions) is written into `config_json`, which otherwise stays as it was.
std::vector<Problem> set_known_setting(nlohmann::json& config_json, std::string_view key, std::string_view text);
// Makes `key` unknown again.
void forget_setting(nlohmann::json& config_json, std::string_view key);

// The config as a session records a trial it queues: every key of a benchmark trial; of a script
// trial (script.h) only the keys that are its own, applied or named in its arguments, so the rest
// reads as unknown (the probe's hello adds what it saw), as for an imported trace.
nlohmann::json recorded_json(const TrialConfig& config);

}  // namespace tunebench::config
