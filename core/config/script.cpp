#include "core/config/script.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tunebench::config {

const std::vector<std::string>& script_knob_keys() {
  static const std::vector<std::string> keys = {
      "num_workers", "pin_memory",  "persistent_workers", "prefetch_factor",         "cudnn_benchmark",
      "amp",         "compile",     "bucket_mb",          "gradient_as_bucket_view", "static_graph"};
  return keys;
}

bool is_script_knob(std::string_view key) {
  const auto& k = script_knob_keys();
  return std::find(k.begin(), k.end(), key) != k.end();
}

bool is_script_trial_knob(std::string_view key) {
  static const std::vector<std::string_view> own = {
      "name",   "world_size", "steps",      "warmup",       "step_timeout_s", "gpu_sample_hz",
      "kernel_sample_every", "kernel_sample_steps", "rendezvous_timeout_s", "collective_timeout_s",
      "nccl_env", "script",   "script_args", "python",      "script_knobs"};
  if (std::find(own.begin(), own.end(), key) != own.end()) return true;
  const KnobInfo* k = find_knob(key);
  return k && k->group == "Where";
}

std::vector<std::string> template_keys(std::string_view args, std::vector<Problem>* problems) {
  std::vector<std::string> keys;
  auto problem = [&](std::string message) {
    if (problems) problems->push_back({"script_args", std::move(message)});
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == '{' && i + 1 < args.size() && args[i + 1] == '{') {
      ++i;
      continue;
    }
    if (args[i] == '}' && i + 1 < args.size() && args[i + 1] == '}') {
      ++i;
      continue;
    }
    if (args[i] != '{') continue;
    const size_t end = args.find('}', i);
    if (end == std::string_view::npos) {
      problem("an argument opens '{' without closing it (write '{{' for a literal brace)");
      break;
    }
    const std::string name(args.substr(i + 1, end - i - 1));
    if (!find_knob(name))
      problem("'{" + name + "}' names no knob (e.g. {micro_batch}, {seq_len}, {grad_accum})");
    else if (std::find(keys.begin(), keys.end(), name) == keys.end())
      keys.push_back(name);
    i = end;
  }
  return keys;
}

bool script_can_set(const TrialConfig& c, std::string_view key) {
  if (is_script_knob(key) || is_script_trial_knob(key)) return true;
  const auto keys = template_keys(c.script_args);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void apply_to_script(TrialConfig& c, std::string_view key) {
  if (!is_script(c) || !is_script_knob(key)) return;
  if (std::find(c.script_knobs.begin(), c.script_knobs.end(), key) == c.script_knobs.end())
    c.script_knobs.emplace_back(key);
}

namespace {

// The template with every {name} replaced by the knob's text.
std::string filled(const TrialConfig& c) {
  std::vector<Problem> problems;
  template_keys(c.script_args, &problems);
  if (!problems.empty()) throw std::invalid_argument(problems.front().message);
  const std::string& a = c.script_args;
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == '{' || a[i] == '}') && i + 1 < a.size() && a[i + 1] == a[i]) {
      out += a[i++];
      continue;
    }
    if (a[i] != '{') {
      out += a[i];
      continue;
    }
    const size_t end = a.find('}', i);
    out += knob_text(c, a.substr(i + 1, end - i - 1));
    i = end;
  }
  return out;
}

}  // namespace

std::vector<std::string> script_argv(const TrialConfig& c) {
  const std::string text = filled(c);
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote == '\'') {
      if (ch == '\'') quote = 0;
      else word += ch;
    } else if (quote == '"') {
      if (ch == '"') {
        quote = 0;
      } else if (ch == '\\' && i + 1 < text.size() && std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) {
        word += text[++i];
      } else {
        word += ch;
      }
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      in_word = true;
      if (ch == '\'' || ch == '"') quote = ch;
      else if (ch == '\\' && i + 1 < text.size()) word += text[++i];
      else word += ch;
    }
  }
  if (quote) throw std::invalid_argument(std::string("the arguments leave a ") + (quote == '"' ? "\"" : "'") + " open");
  if (in_word) words.push_back(std::move(word));
  return words;
}

void validate_script(const TrialConfig& c, std::vector<Problem>& out) {
  auto need = [&](bool ok, const char* key, std::string message) {
    if (!ok) out.push_back({key, std::move(message)});
  };
  auto printable = [&](const std::string& v, const char* key, const std::string& what) {
    bool ok = true;
    for (unsigned char ch : v) ok = ok && ch >= 0x20 && ch != 0x7f;
    need(ok, key, what + " contains a control character");
  };
  printable(c.script, "script", "the script's path");
  printable(c.script_args, "script_args", "the script's arguments");
  printable(c.python, "python", "the interpreter's path");
  const size_t before = out.size();
  template_keys(c.script_args, &out);
  if (out.size() == before) {  // names fine: is the rest one a shell would split?
    try {
      script_argv(c);
    } catch (const std::invalid_argument& e) {
      out.push_back({"script_args", e.what()});
    }
  }
  for (const auto& key : c.script_knobs)
    need(is_script_knob(key), "script_knobs",
         "'" + key + "' cannot be applied to a script without changing it (the probe applies: num_workers, "
         "pin_memory, persistent_workers, prefetch_factor, cudnn_benchmark, amp, compile, bucket_mb, "
         "gradient_as_bucket_view, static_graph); name it in the arguments instead, e.g. {" + key + "}");
  auto applied = [&](const char* key) {
    return std::find(c.script_knobs.begin(), c.script_knobs.end(), key) != c.script_knobs.end();
  };
  need(c.world_size >= 1, "world_size", "a script runs at least one rank");
  if (applied("num_workers"))
    need(c.num_workers >= 0 && c.num_workers <= 64, "num_workers", "num_workers must be between 0 and 64");
  if (applied("prefetch_factor")) {
    need(c.prefetch_factor >= 0 && c.prefetch_factor <= 1024, "prefetch_factor",
         "prefetch_factor must be between 0 (PyTorch's default) and 1024");
    need(c.prefetch_factor == 0 || !applied("num_workers") || c.num_workers > 0, "prefetch_factor",
         "prefetch_factor needs loader processes: set num_workers above 0");
  }
  if (applied("persistent_workers"))
    need(!c.persistent_workers || !applied("num_workers") || c.num_workers > 0, "persistent_workers",
         "persistent_workers needs loader processes: set num_workers above 0");
  if (applied("amp"))
    need(c.amp == Amp::Fp32 || c.amp == Amp::Tf32 || c.amp == Amp::Bf16 || c.amp == Amp::Fp16, "amp",
         "a script takes amp fp32, tf32, bf16 or fp16 (autocast of its forward); " + std::string(to_string(c.amp)) +
             " is the benchmark's");
  if (applied("compile"))
    need(c.compile == Compile::Off || c.compile == Compile::Torch, "compile",
         "a script takes compile 'torch' (torch.compile of its model) or 'off'; " + std::string(to_string(c.compile)) +
             " is the benchmark's");
  if (applied("bucket_mb"))
    need(c.bucket_mb > 0 && c.bucket_mb <= 16384, "bucket_mb", "bucket size must be between 0 and 16384 MiB");
  need(std::isfinite(c.step_timeout_s) && c.step_timeout_s > 0 && c.step_timeout_s <= 7 * 24 * 3600.0,
       "step_timeout_s", "the step timeout must be between 0 and 604800 s (one week)");
}

}  // namespace tunebench::config
