// A script trial's config (core/config/script.h): its arguments' template, the knobs it takes,
// what set_knob applies, what a session records of it, and the rules validate() keeps for it.
#include "core/config/script.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/config/known_settings.h"

namespace tc = tunebench::config;

namespace {

tc::TrialConfig script(const std::string& args = "") {
  tc::TrialConfig c;
  c.script = "/home/alice/train.py";
  c.script_args = args;
  return c;
}

bool has(const std::vector<tc::Problem>& problems, const std::string& key, const std::string& words) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const tc::Problem& p) { return p.key == key && p.message.find(words) != std::string::npos; });
}

}  // namespace

TEST(ScriptConfig, ArgumentsFillTheTemplateAndSplitAsAShellDoes) {
  tc::TrialConfig c = script("--batch-size {micro_batch} --name 'two words' \"a \\\"q\\\"\" --braces {{x}} back\\ slash");
  c.micro_batch = 12;
  EXPECT_EQ(tc::script_argv(c), (std::vector<std::string>{"--batch-size", "12", "--name", "two words", "a \"q\"",
                                                          "--braces", "{x}", "back slash"}));
  EXPECT_EQ(tc::template_keys(c.script_args), std::vector<std::string>{"micro_batch"});
  EXPECT_EQ(tc::script_argv(script("")), std::vector<std::string>{});
  EXPECT_THROW(tc::script_argv(script("--lr 'open")), std::invalid_argument);
  EXPECT_THROW(tc::script_argv(script("--n {nope}")), std::invalid_argument);
}

TEST(ScriptConfig, WhatAScriptCanSet) {
  const tc::TrialConfig c = script("--seq {seq_len}");
  for (const char* key : {"num_workers", "pin_memory", "amp", "bucket_mb", "static_graph", "seq_len", "steps",
                          "world_size", "nccl_env", "launcher"})
    EXPECT_TRUE(tc::script_can_set(c, key)) << key;
  for (const char* key : {"model", "checkpointing", "strategy", "micro_batch", "ddp_overlap", "compression"})
    EXPECT_FALSE(tc::script_can_set(c, key)) << key;
}

TEST(ScriptConfig, SetKnobAppliesAScriptKnobToTheScriptOnly) {
  tc::TrialConfig c = script();
  ASSERT_FALSE(tc::set_knob(c, "num_workers", "4"));
  ASSERT_FALSE(tc::set_knob(c, "steps", "30"));
  ASSERT_FALSE(tc::set_knob(c, "num_workers", "2"));
  EXPECT_EQ(c.script_knobs, std::vector<std::string>{"num_workers"});  // once, and not the run length
  tc::TrialConfig benchmark;
  ASSERT_FALSE(tc::set_knob(benchmark, "num_workers", "4"));
  EXPECT_TRUE(benchmark.script_knobs.empty());
  ASSERT_FALSE(tc::set_knob(c, "script_knobs", "amp, pin_memory"));
  EXPECT_EQ(c.script_knobs, (std::vector<std::string>{"amp", "pin_memory"}));
  EXPECT_EQ(tc::knob_text(c, "script_knobs"), "amp,pin_memory");
  const auto back = tc::from_json(tc::to_json(c));
  ASSERT_TRUE(back.ok()) << tc::describe(back.problems);
  EXPECT_EQ(back.config, c);
}

TEST(ScriptConfig, ValidationKeepsTheScriptsRulesNotTheBenchmarks) {
  tc::TrialConfig c = script("--batch-size {micro_batch}");
  c.world_size = 2;  // strategy stays "single": the script wraps its model itself
  c.model = "no such preset";
  EXPECT_TRUE(tc::validate(c).empty()) << tc::describe(tc::validate(c));

  c.script_knobs = {"checkpointing", "amp", "compile", "num_workers", "prefetch_factor"};
  c.amp = tc::Amp::Fp8;
  c.compile = tc::Compile::Fused;
  c.num_workers = 0;
  c.prefetch_factor = 4;
  c.script_args = "--x {nope} ";
  c.steps = 2;
  c.warmup = 2;
  const auto p = tc::validate(c);
  EXPECT_TRUE(has(p, "script_knobs", "'checkpointing' cannot be applied to a script")) << tc::describe(p);
  EXPECT_TRUE(has(p, "amp", "fp32, tf32, bf16 or fp16")) << tc::describe(p);
  EXPECT_TRUE(has(p, "compile", "compile 'torch'")) << tc::describe(p);
  EXPECT_TRUE(has(p, "prefetch_factor", "needs loader processes")) << tc::describe(p);
  EXPECT_TRUE(has(p, "script_args", "'{nope}' names no knob")) << tc::describe(p);
  EXPECT_TRUE(has(p, "warmup", "at least one measured step")) << tc::describe(p);

  tc::TrialConfig benchmark;
  benchmark.compile = tc::Compile::Torch;
  EXPECT_TRUE(has(tc::validate(benchmark), "compile", "torch.compile of your own script"));
}

TEST(ScriptConfig, ASessionRecordsOnlyWhatIsKnownOfAScript) {
  tc::TrialConfig c = script("--seq {seq_len}");
  ASSERT_FALSE(tc::set_knob(c, "num_workers", "4"));
  const auto j = tc::recorded_json(c);
  for (const char* key : {"script", "script_args", "script_knobs", "num_workers", "seq_len", "steps", "world_size"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"model", "strategy", "micro_batch", "pin_memory", "checkpointing"})
    EXPECT_FALSE(j.contains(key)) << key;
  EXPECT_FALSE(tc::is_known(j, "model"));
  EXPECT_TRUE(tc::is_known(j, "num_workers"));
  EXPECT_FALSE(tc::is_known(j, "persistent_workers"));  // the script's own, not seen

  // The benchmark records every key, and the script's fields never read as unknown there.
  const tc::TrialConfig benchmark;
  EXPECT_EQ(tc::recorded_json(benchmark), tc::to_json(benchmark));
  auto before_scripts = tc::to_json(benchmark);
  for (const char* key : {"script", "script_args", "python", "script_knobs", "persistent_workers", "prefetch_factor",
                          "gradient_as_bucket_view", "static_graph", "step_timeout_s", "script_batch_unit"})
    before_scripts.erase(key);
  EXPECT_TRUE(tc::unknown_knobs(before_scripts).empty());
}
