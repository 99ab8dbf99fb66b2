// Known settings: which knobs a partial config knows, and setting one through the same parsing
// and validation as the form and the worker.
#include "core/config/known_settings.h"

#include <gtest/gtest.h>

namespace tc = tunebench::config;

namespace {
size_t where_knobs() {
  size_t n = 0;
  for (const auto& k : tc::knobs()) n += k.group == "Where";
  return n;
}
// The fields of a user's own script: they mean nothing to a benchmark trial, known there.
size_t script_knobs() {
  size_t n = 0;
  // Samples per step is in the script's group but a setting of any trial counted in samples: unknown
  // in an imported trace until given (issue 44).
  for (const auto& k : tc::knobs()) n += k.group == "Your script" && k.key != "samples_per_step";
  return n;
}
}  // namespace

TEST(KnownSettings, AbsentKeysAreUnknownAndWorkerConfigsKnowEverything) {
  EXPECT_TRUE(tc::unknown_knobs(tc::to_json(tc::TrialConfig{})).empty());
  const nlohmann::json partial = {{"strategy", "ddp"}, {"world_size", 2}};
  const auto unknown = tc::unknown_knobs(partial);
  ASSERT_GT(where_knobs(), 10u);
  // All but name, strategy, world_size, Where, the kernel sampling (how the run was observed) and
  // a script's fields (this is no script).
  ASSERT_GT(script_knobs(), 5u);
  EXPECT_EQ(unknown.size(), tc::knobs().size() - 3 - where_knobs() - 2 - script_knobs());
  EXPECT_TRUE(tc::is_known(partial, "script_args"));
  EXPECT_TRUE(tc::is_known(partial, "launcher"));  // configs from before the launchers ran here
  EXPECT_TRUE(tc::is_known(partial, "kernel_sample_every"));  // configs from before kernel sampling
  EXPECT_EQ(unknown.front(), "model");                // knobs() order
  EXPECT_TRUE(tc::is_known(partial, "strategy"));
  EXPECT_TRUE(tc::is_known(partial, "name"));
  EXPECT_FALSE(tc::is_known(partial, "micro_batch"));
  EXPECT_FALSE(tc::is_known(partial, "samples_per_step"));
  EXPECT_TRUE(tc::is_known(tc::to_json(tc::TrialConfig{}), "samples_per_step"));  // the benchmark: 0, tokens
  EXPECT_EQ(tc::unknown_knobs(nullptr).size(), tc::knobs().size() - 1 - where_knobs() - 2 - script_knobs());
}

TEST(KnownSettings, AWorkersConfigFromBeforeTheModelKnobsStillKnowsEverything) {
  // Sessions written before kv_heads, tie_embeddings, rope_theta and attention existed hold every
  // other knob: those four are what that worker ran (and such a trial can still be investigated).
  nlohmann::json old = tc::to_json(*tc::trial_preset("7b-single"));
  for (const char* k : {"kv_heads", "tie_embeddings", "rope_theta", "attention"}) old.erase(k);
  EXPECT_TRUE(tc::unknown_knobs(old).empty());
  const auto parsed = tc::from_json(old);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.config.dims.kv_head_count(), 32);
  // An imported trace's partial config does not know them.
  const nlohmann::json partial = {{"model", "custom"}, {"dim", 4096}, {"heads", 32}};
  EXPECT_FALSE(tc::is_known(partial, "kv_heads"));
  EXPECT_FALSE(tc::is_known(partial, "attention"));
}

TEST(KnownSettings, SettingParsesValidatesAndWritesOnlyThatKey) {
  nlohmann::json c = {{"strategy", "ddp"}, {"world_size", 2}};
  EXPECT_TRUE(tc::set_known_setting(c, "micro_batch", "8").empty());
  EXPECT_EQ(c, (nlohmann::json{{"strategy", "ddp"}, {"world_size", 2}, {"micro_batch", 8}}));
  EXPECT_TRUE(tc::set_known_setting(c, "amp", "bf16").empty());
  EXPECT_EQ(c["amp"], "bf16");
  // A model preset brings its dimensions.
  EXPECT_TRUE(tc::set_known_setting(c, "model", "7b").empty());
  EXPECT_EQ(c["dim"], 4096);
  EXPECT_EQ(c["layers"], 32);

  const nlohmann::json before = c;
  auto p = tc::set_known_setting(c, "micro_bach", "8");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message, "unknown knob 'micro_bach'");
  p = tc::set_known_setting(c, "num_workers", "lots");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].key, "num_workers");
  p = tc::set_known_setting(c, "num_workers", "100");  // validate(): at most 64
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message, "num_workers must be between 0 and 64");
  p = tc::set_known_setting(c, "strategy", "single");  // contradicts the known world size 2
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].key, "world_size");
  EXPECT_EQ(c, before);  // nothing written on a problem
}

TEST(KnownSettings, ProblemsThatOnlyDefaultsCauseAreNotTheUsers) {
  // 2 ranks known, strategy unknown (defaults to single, which validate() finds inconsistent).
  nlohmann::json c = {{"world_size", 2}};
  EXPECT_TRUE(tc::set_known_setting(c, "micro_batch", "8").empty());
  // dim without a custom model: validate() complains about "model", which is unknown here.
  EXPECT_TRUE(tc::set_known_setting(c, "dim", "768").empty());
  // ... but a problem about the knob being set is the user's.
  const auto p = tc::set_known_setting(c, "world_size", "4");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].key, "world_size");
  tc::forget_setting(c, "dim");
  EXPECT_FALSE(tc::is_known(c, "dim"));
}
