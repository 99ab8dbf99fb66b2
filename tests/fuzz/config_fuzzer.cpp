// Fuzz target: bytes as a trial configuration from a stranger (a --config file, a session's
// trials.config, a hello event's config).
//
// The JSON goes through config::from_json and config::validate like the worker's --config does;
// then the oracles: to_json(from_json(x)) reads back to the same configuration, and set_knob with
// the text of every knob is the identity.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "core/protocol/event_reader.h"

namespace tc = tunebench::config;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The worker and the store refuse deep nesting before parsing (nlohmann recurses per level).
  if (!tunebench::protocol::json_nesting_within(text, 64)) return 0;
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  const auto parsed = tc::from_json(j);
  (void)tc::describe(parsed.problems);

  const auto again = tc::from_json(tc::to_json(parsed.config));
  if (!again.ok() || !(again.config == parsed.config)) __builtin_trap();
  tc::TrialConfig copy = parsed.config;
  // The text form "NAME=value,NAME=value" can hold only names validate() accepts, and values with
  // a comma only when no "NAME=" follows it; other maps are not expected to round-trip as text.
  bool env_as_text = true;
  for (const auto& p : tc::validate(parsed.config)) env_as_text = env_as_text && p.key != "nccl_env";
  for (const auto& [name, value] : parsed.config.nccl_env)
    env_as_text = env_as_text && value.find(',') == std::string::npos;
  for (const auto& knob : tc::knobs()) {
    if (knob.key == "model") continue;  // setting the preset resets the dims: not an identity
    if (knob.key == "nccl_env" && !env_as_text) continue;
    if (auto problem = tc::set_knob(copy, knob.key, tc::knob_text(parsed.config, knob.key))) __builtin_trap();
  }
  if (!(copy == parsed.config)) __builtin_trap();
  return 0;
}
