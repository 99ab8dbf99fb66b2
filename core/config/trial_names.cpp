#include "core/config/trial_names.h"

#include "core/config/script.h"

#include <algorithm>
#include <cctype>

namespace tunebench::config {

namespace {

// Knobs that say what is trained and how; run length, sampling and where the ranks run do not
// make a trial a different one to compare.
bool describes_training(const KnobInfo& k) {
  return k.group != "Run length" && k.group != "Where" && k.key != "name";
}

std::string model_word(const TrialConfig& c) {
  std::string m = c.model;
  if (!m.empty() && (m.back() == 'b' || m.back() == 'B') && m.size() > 1 && std::isdigit(static_cast<unsigned char>(m[0])))
    m.back() = 'B';  // "7b" -> "7B", as the presets write it
  return m;
}

}  // namespace

std::string describe_trial(const TrialConfig& c, const TrialConfig& reference) {
  if (is_script(c)) {
    // "train.py x2 [num_workers=4, amp=bf16]": the script, its ranks, what is applied to it.
    const size_t slash = c.script.find_last_of('/');
    std::string s = slash == std::string::npos ? c.script : c.script.substr(slash + 1);
    if (c.world_size > 1) s += " x" + std::to_string(c.world_size);
    std::vector<std::string> changes;
    std::vector<std::string> keys = c.script_knobs;
    for (const auto& k : template_keys(c.script_args)) keys.push_back(k);
    for (const auto& k : keys)
      if (knob_text(c, k) != knob_text(reference, k) || !is_script(reference)) changes.push_back(k + "=" + knob_text(c, k));
    if (!changes.empty()) {
      s += " [";
      for (size_t i = 0; i < changes.size() && i < 3; ++i) s += (i ? ", " : "") + changes[i];
      if (changes.size() > 3) s += ", …";
      s += "]";
    }
    return s;
  }
  std::string s = model_word(c);
  switch (c.strategy) {
    case Strategy::Single:
      s += c.world_size > 1 ? " x" + std::to_string(c.world_size) : " single";
      break;
    case Strategy::Ddp:
      s += " DDP x" + std::to_string(c.world_size);
      break;
    case Strategy::Fsdp:
      s += " FSDP x" + std::to_string(c.world_size);
      break;
  }
  if (c.device == Device::Cpu) s += " on CPU";
  if (c.device == Device::Cuda) s += " on GPU";
  // The knobs the base words do not say already.
  static const char* const kSaid[] = {"model", "strategy", "world_size", "device", "dim", "layers", "heads", "ffn", "vocab"};
  std::vector<std::string> changes;
  for (const std::string& key : differing_knobs(reference, c)) {
    const KnobInfo* info = find_knob(key);
    if (!info || !describes_training(*info)) continue;
    if (std::find_if(std::begin(kSaid), std::end(kSaid), [&](const char* k) { return key == k; }) != std::end(kSaid))
      continue;
    changes.push_back(key + "=" + knob_text(c, key));
  }
  if (!changes.empty()) {
    s += " [";
    for (size_t i = 0; i < changes.size() && i < 3; ++i) s += (i ? ", " : "") + changes[i];
    if (changes.size() > 3) s += ", …";
    s += "]";
  }
  return s;
}

std::string default_trial_name(const TrialConfig& c) {
  if (c.name.empty()) return describe_trial(c, TrialConfig{});
  for (const auto& p : trial_presets()) {
    if (p.config.name != c.name) continue;
    for (const std::string& key : differing_knobs(p.config, c))
      if (const KnobInfo* info = find_knob(key); info && describes_training(*info)) return describe_trial(c, p.config);
    return c.name;  // still that preset (perhaps run longer or elsewhere)
  }
  return c.name;  // the user's own name
}

std::string unique_trial_name(const std::string& name, const std::vector<std::string>& taken) {
  auto used = [&](const std::string& n) { return std::find(taken.begin(), taken.end(), n) != taken.end(); };
  if (!used(name)) return name;
  for (int i = 2;; ++i)
    if (const std::string candidate = name + " #" + std::to_string(i); !used(candidate)) return candidate;
}

}  // namespace tunebench::config
