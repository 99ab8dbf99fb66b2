// Your own PyTorch script as a trial (docs/SCRIPTS.md): the knobs a script can take, its arguments'
// template, and the rules validate() applies to a script trial. The probe that runs the script
// (app/probe/tunebench_probe) reads the same keys; the launcher (core/launch) builds its command
// line with script_argv.
//
// A script trial is a TrialConfig whose `script` is set. The script owns its model, data loader
// and wrapping, so of the benchmark's knobs only these mean something to it:
//   - the knobs the probe applies without a code change (script_knob_keys), and only those the
//     user chose (script_knobs): the others stay as the script has them, "unknown" to the analysis;
//   - any knob its arguments name ("--batch-size {micro_batch}"): the argument is filled in;
//   - the trial's own: ranks (world_size), run length, telemetry, NCCL variables and where it runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/config/trial_config.h"

namespace tunebench::config {

inline bool is_script(const TrialConfig& c) { return !c.script.empty(); }

// The knobs tunebench_probe applies to a script: DataLoader num_workers, pin_memory,
// persistent_workers, prefetch_factor; cudnn_benchmark; amp (tf32, or autocast of the outermost
// forward); compile (torch.compile); DDP bucket_mb, gradient_as_bucket_view, static_graph.
const std::vector<std::string>& script_knob_keys();
bool is_script_knob(std::string_view key);
// Knobs every script trial has (not the script's): name, ranks, run length, telemetry, timeouts,
// NCCL variables, the script fields and where it runs.
bool is_script_trial_knob(std::string_view key);

// The knob names the arguments' template uses, in order ("{micro_batch}"; "{{" is a literal "{").
// Problems (key script_args) for an unknown name or an unclosed brace.
std::vector<std::string> template_keys(std::string_view script_args, std::vector<Problem>* problems = nullptr);

// Whether a script trial can change `key`: a script knob, a knob its arguments name, or one of the
// trial's own. What a diagnosis may suggest and a sweep or a search may vary on a script.
bool script_can_set(const TrialConfig& c, std::string_view key);

// Marks `key` applied to the script when `c` is a script trial and `key` a script knob (set_knob
// does this: a --set, a sweep's axis or a suggestion on a script is meant to reach it).
void apply_to_script(TrialConfig& c, std::string_view key);

// The script's arguments: the template filled in with the knobs' values, then split as a POSIX
// shell splits words (quotes and backslashes; nothing is expanded). Throws std::invalid_argument
// with the reason (an unclosed quote, an unknown name).
std::vector<std::string> script_argv(const TrialConfig& c);

// validate()'s rules for a script trial (the benchmark's model, data and strategy rules do not
// apply: the script has its own).
void validate_script(const TrialConfig& c, std::vector<Problem>& out);

}  // namespace tunebench::config
