#include "worker_options.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include <CLI/CLI.hpp>

#include "core/config/hf_config.h"
#include "core/protocol/event_reader.h"
#include "core/protocol/event_token.h"
#include "core/protocol/exit_codes.h"

namespace tunebench::worker {

std::string flag_name(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

namespace {

std::string knob_description(const config::KnobInfo& k) {
  std::string d = k.help;
  if (!k.unit.empty()) d += " [" + k.unit + "]";
  if (!k.choices.empty()) {
    d += " (";
    for (size_t i = 0; i < k.choices.size(); ++i) d += (i ? "|" : "") + k.choices[i];
    d += ")";
  }
  return d;
}

constexpr const char* kFooter = R"(
Ranks: started alone the worker is rank 0 of 1. Under torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT) or SLURM (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) it joins the other
ranks through a c10d TCPStore; the environment's world size overrides --world-size.

compile: libtorch has no torch.compile. --compile fused runs RMSNorm+residual, rotary embedding,
SwiGLU and linear+cross-entropy as fused CUDA kernels (every strategy); --compile graph captures
the step into a CUDA graph (single GPU, no fusion); --compile fused+graph does both.

Events: one JSON object per line (docs/PROTOCOL.md). Human-readable logs go to stderr.

Exit codes: 0 ok, 1 internal error, 2 invalid configuration, 3 out of memory,
4 communication failure or timeout, 5 unsupported on this build/machine, 6 event channel error.)";

// A configuration file is small text: a directory, a device or a 1 GB file is a mistake to report,
// not something to hand to a JSON parser (a directory made libstdc++ throw __ios_failure).
bool read_config_text(const std::string& path, std::string& text, std::string& why) {
  constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    why = "cannot read " + path + ": no such file";
    return false;
  }
  if (!std::filesystem::is_regular_file(status)) {
    why = path + " is not a regular file (a directory?); --config takes a JSON file";
    return false;
  }
  if (std::filesystem::file_size(path, ec) > kMaxConfigBytes) {
    why = path + " is larger than 1 MiB; --config takes a trial configuration JSON file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot read " + path;
    return false;
  }
  try {  // libstdc++'s filebuf throws on a read error (EIO) instead of setting badbit
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    in.setstate(std::ios::badbit);
  }
  if (in.bad()) {
    why = "cannot read " + path;
    return false;
  }
  return true;
}

}  // namespace

WorkerOptions parse_worker_options(int argc, char** argv) {
  WorkerOptions out;
  CLI::App app{"tunebench-worker: one rank of a Tunebench benchmark trial (LLaMA-style model, libtorch)"};
  app.footer(kFooter);
  app.get_formatter()->column_width(34);
  std::string config_file, preset;
  bool list_presets = false;
  app.add_option("--config", config_file, "Trial configuration JSON (knob flags override it)");
  app.add_option("--preset", preset, "Start from a named trial preset (see --list-presets)");
  std::string hf_config;
  app.add_option("--hf-config", hf_config,
                 "The model's shape from a Hugging Face config.json (hidden_size, num_key_value_heads, ...) over "
                 "--config; fields it cannot model are named in a warning");
  app.add_option("--events", out.events, "Event channel: file:PATH | unix:PATH | tcp://HOST:PORT | stdout");
  app.add_option("--event-token", out.event_token,
                 "Token a tcp:// event listener demands in the first line (prefer the environment variable: "
                 "a command line is visible to every user of the machine)")
      ->envname(std::string(protocol::kEventTokenVariable));
  app.add_option("--trial", out.trial, "Trial id stamped on every event");
  app.add_flag("--print-config", out.print_config, "Print the resolved configuration as JSON and exit");
  app.add_option("--save-params", out.save_params, "After training, write rank 0's full parameters as raw float32")
      ->group("Diagnostics");
  app.add_flag("--list-presets", list_presets, "List the trial presets and exit");
  app.add_flag("--probe-link", out.probe_link,
               "Measure all-reduce bus bandwidth between the ranks (nccl-tests definition) instead of training")
      ->group("Link probe");
  app.add_option("--probe-min-mb", out.probe_min_mb, "Smallest all-reduce of the probe [MiB]")->group("Link probe");
  app.add_option("--probe-max-mb", out.probe_max_mb, "Largest all-reduce of the probe [MiB]")->group("Link probe");
  app.add_option("--probe-dtype", out.probe_dtype, "Element type of the probe (fp32|bf16)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->group("Link probe");

  // One option per knob, in the groups of the GUI form. Values are kept as text and applied
  // through config::set_knob, so the worker, the GUI and the CLI share one parser per knob.
  std::map<std::string, std::string> values;
  for (const auto& k : config::knobs()) {
    if (k.group == "Your script") continue;  // tunebench_probe runs scripts, not the worker
    auto* opt = app.add_option("--" + flag_name(k.key), values[k.key], knob_description(k));
    opt->group(k.group);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later flag overrides an earlier one
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    out.help_shown = true;
    return out;
  } catch (const CLI::ParseError& e) {
    out.problems.push_back({"", e.what()});
    out.exit_code = protocol::kExitConfig;
    return out;
  }
  if (list_presets) {
    for (const auto& p : config::trial_presets()) std::cout << p.name << "\t" << p.description << "\n";
    out.help_shown = true;
    return out;
  }
  if (!preset.empty()) {
    if (auto c = config::trial_preset(preset)) out.config = *c;
    else out.problems.push_back({"preset", "unknown preset '" + preset + "' (see --list-presets)"});
  }
  if (!config_file.empty()) {
    std::string text, why;
    nlohmann::json j;
    if (!read_config_text(config_file, text, why)) {
      out.problems.push_back({"config", why});
    } else if (!protocol::json_nesting_within(text, 64) ||
               (j = nlohmann::json::parse(text, nullptr, false)).is_discarded()) {
      out.problems.push_back({"config", config_file + " is not valid JSON"});
    } else {
      auto parsed = config::from_json(j, out.config);
      out.config = parsed.config;
      out.problems.insert(out.problems.end(), parsed.problems.begin(), parsed.problems.end());
    }
  }
  if (!hf_config.empty()) {
    const auto hf = config::read_hf_config_file(hf_config);
    out.problems.insert(out.problems.end(), hf.problems.begin(), hf.problems.end());
    if (hf.model) {
      config::apply_hf_model(out.config, *hf.model);
      for (const auto& w : hf.model->warnings) out.warnings.push_back(hf_config + ": " + w);
    }
  }
  // Explicit flags last: "model" first, so that --model 7b --layers 2 means the preset, then 2.
  for (const char* first : {"model"}) {
    const auto& text = values[first];
    if (app.count("--" + flag_name(first)) > 0)
      if (auto p = config::set_knob(out.config, first, text)) out.problems.push_back(*p);
  }
  for (const auto& k : config::knobs()) {
    if (k.group == "Your script" || k.key == "model" || app.count("--" + flag_name(k.key)) == 0) continue;
    if (auto p = config::set_knob(out.config, k.key, values[k.key])) out.problems.push_back(*p);
  }
  if (out.probe_link && !(out.probe_min_mb > 0 && out.probe_min_mb <= out.probe_max_mb && out.probe_max_mb <= 65536))
    out.problems.push_back({"", "--probe-min-mb and --probe-max-mb must satisfy 0 < min <= max <= 65536"});
  return out;
}

}  // namespace tunebench::worker
