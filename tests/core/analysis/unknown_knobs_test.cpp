// Trials whose config knows only some knobs (imported torch.profiler traces, config/known_settings.h):
// no figure and no suggestion is built on a default standing in for an unknown knob.
#include <gtest/gtest.h>

#include "core/analysis/compare.h"
#include "core/analysis/diagnosis.h"
#include "core/analysis/report.h"
#include "core/analysis/trial_metrics.h"
#include "core/config/known_settings.h"
#include "tests/core/analysis/synthetic_trial.h"

namespace ta = tunebench::analysis;
namespace tc = tunebench::config;
using namespace tunebench::testing;
using tunebench::protocol::Phase;

namespace {

// A 2-rank DDP-shaped or single trial whose steps report no tokens, with `known` as its config.
tunebench::protocol::TrialLog trial(const std::string& id, const nlohmann::json& known,
                                    const std::vector<tunebench::protocol::Interval>& step) {
  tc::TrialConfig c;
  c.device = tc::Device::Cuda;
  if (known.value("world_size", 1) > 1) {
    c.strategy = tc::Strategy::Ddp;
    c.world_size = known["world_size"];
  }
  SyntheticTrial t(id, c);
  t.add_steps(0, 5, 100'000, step, /*tokens_per_rank=*/0);
  auto log = t.log();
  for (auto& [rank, r] : log.ranks) r.hello->config = known;
  return log;
}

const std::vector<tunebench::protocol::Interval> kDataBound = {
    iv(Phase::DataWait, 0, 40'000), iv(Phase::Forward, 40'000, 70'000), iv(Phase::Backward, 70'000, 100'000)};
const std::vector<tunebench::protocol::Interval> kCommBound = {iv(Phase::Forward, 0, 30'000),
                                                               iv(Phase::Backward, 30'000, 60'000),
                                                               iv(Phase::AllReduce, 60'000, 100'000, 400'000'000)};

bool suggests(const ta::Diagnosis& d, const std::string& key) {
  for (const auto& f : d.findings)
    for (const auto& s : f.suggestions)
      for (const auto& ch : s.changes)
        if (ch.key == key) return true;
  return false;
}

}  // namespace

TEST(UnknownKnobs, TokensAndFlopsNeedTheirKnobsKnown) {
  const nlohmann::json known = {{"strategy", "single"}, {"world_size", 1}, {"micro_batch", 8}, {"seq_len", 512}};
  auto m = ta::analyze(trial("imported", known, kDataBound));
  size_t where = 0, script = 0;  // where a trial ran is never unknown (known_settings.h)
  for (const auto& k : tc::knobs()) where += k.group == "Where";
  // nor a script's fields, on no script, but samples per step (a known setting of any imported trace)
  for (const auto& k : tc::knobs()) script += k.group == "Your script" && k.key != "samples_per_step";
  // Nor is how it was observed (kernel_sample_every, kernel_sample_steps).
  EXPECT_EQ(m.unknown_knobs.size(), tc::knobs().size() - 1 - 4 - where - 2 - script);
  EXPECT_TRUE(m.knows({"micro_batch", "seq_len"}));
  EXPECT_FALSE(m.knows({"micro_batch", "grad_accum"}));
  EXPECT_EQ(m.tokens_per_step, 0.0);  // grad_accum unknown: not 8 x 512 x (default 1)
  EXPECT_FALSE(m.flops_per_token);    // dims unknown: not the tiny preset's
  EXPECT_FALSE(m.mfu);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("knobs are unknown"), std::string::npos);

  auto with_accum = known;
  with_accum["grad_accum"] = 2;
  m = ta::analyze(trial("imported", with_accum, kDataBound));
  EXPECT_EQ(m.tokens_per_step, 8 * 512 * 2);

  // A native config knows everything: the config's tokens stand in for steps reporting none.
  auto native = ta::analyze(trial("native", tc::to_json(tc::TrialConfig{}), kDataBound));
  EXPECT_TRUE(native.unknown_knobs.empty());
  EXPECT_EQ(native.tokens_per_step, tc::TrialConfig{}.tokens_per_rank_step());
  EXPECT_TRUE(native.flops_per_token);
}

TEST(UnknownKnobs, SuggestionsOnlyFromKnownKnobs) {
  nlohmann::json known = {{"strategy", "single"}, {"world_size", 1}, {"device", "cuda"}};
  auto d = ta::diagnose(ta::analyze(trial("nw?", known, kDataBound)));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().kind, ta::FindingKind::DataBound);
  EXPECT_FALSE(suggests(d, "num_workers"));  // "from 0" would be a guess
  EXPECT_FALSE(suggests(d, "pin_memory"));
  known["num_workers"] = 0;
  d = ta::diagnose(ta::analyze(trial("nw0", known, kDataBound)));
  EXPECT_TRUE(suggests(d, "num_workers"));
  EXPECT_EQ(d.findings.front().suggestions.front().title, "num_workers 4");

  nlohmann::json ddp = {{"strategy", "ddp"}, {"world_size", 2}, {"device", "cuda"}};
  d = ta::diagnose(ta::analyze(trial("ddp", ddp, kCommBound)));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().kind, ta::FindingKind::CommBound);
  EXPECT_NE(d.findings.front().title.find("exposed all-reduce"), std::string::npos) << d.findings.front().title;
  EXPECT_TRUE(d.findings.front().suggestions.empty());  // grad_accum, compression, bucket_mb: unknown
  ddp["grad_accum"] = 1;
  ddp["bucket_mb"] = 25.0;
  d = ta::diagnose(ta::analyze(trial("ddp", ddp, kCommBound)));
  EXPECT_TRUE(suggests(d, "grad_accum"));
  EXPECT_TRUE(suggests(d, "bucket_mb"));
  EXPECT_FALSE(suggests(d, "compression"));
}

// A user's own script (issue 39): its hello holds what the probe applied or saw. The diagnosis
// suggests only what the probe can apply to it (or its arguments name), never the benchmark's knobs.
TEST(UnknownKnobs, AScriptIsSuggestedOnlyWhatItsProbeCanApply) {
  const nlohmann::json ddp_script = {{"script", "/home/alice/train.py"}, {"world_size", 2}, {"strategy", "ddp"},
                                     {"num_workers", 0},  {"bucket_mb", 25.0},  {"script_knobs", {"num_workers"}},
                                     {"steps", 5},        {"warmup", 0}};
  auto m = ta::analyze(trial("script", ddp_script, kCommBound));
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("your own script"), std::string::npos) << m.notes.back();
  auto d = ta::diagnose(m);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().kind, ta::FindingKind::CommBound);
  EXPECT_TRUE(suggests(d, "bucket_mb"));      // DDP(bucket_cap_mb=) from outside
  EXPECT_FALSE(suggests(d, "grad_accum"));    // the script's own loop
  EXPECT_FALSE(suggests(d, "ddp_overlap"));
  EXPECT_FALSE(suggests(d, "compression"));

  nlohmann::json loader = ddp_script;
  loader["world_size"] = 1;
  loader["strategy"] = "single";
  d = ta::diagnose(ta::analyze(trial("script loader", loader, kDataBound)));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().kind, ta::FindingKind::DataBound);
  EXPECT_TRUE(suggests(d, "num_workers"));
}

TEST(UnknownKnobs, ImportedTrialsAreNeverPooledAndTheDiffSaysUnknown) {
  const nlohmann::json a = {{"strategy", "single"}, {"world_size", 1}, {"num_workers", 0}};
  const nlohmann::json b = {{"strategy", "single"}, {"world_size", 1}};
  const auto grouped = ta::analyze_grouped({trial("a", a, kDataBound), trial("a2", a, kDataBound)});
  EXPECT_EQ(grouped.size(), 2u);  // equal known knobs say nothing about the unknown ones

  const auto c = ta::compare({ta::analyze(trial("a", a, kDataBound)), ta::analyze(trial("b", b, kDataBound))});
  ASSERT_EQ(c.config_diff.size(), 1u);
  EXPECT_EQ(c.config_diff[0].key, "num_workers");
  EXPECT_EQ(c.config_diff[0].values, (std::vector<std::string>{"0", "unknown"}));
  ASSERT_EQ(c.throughput_statements.size(), 1u);
  EXPECT_NE(c.throughput_statements[0].find("work per step of a is unknown"), std::string::npos)
      << c.throughput_statements[0];
  for (const auto& row : c.metrics) EXPECT_NE(row.key, "tokens_per_s_total");
}

// Issue 44: an imported trace of a CNN never got a throughput: its Settings offered only the LLM's
// micro_batch, seq_len and grad_accum. Samples per step (per rank) is a known setting of its own;
// given, the trial, the comparison and the report show samples/s from the measured step time.
TEST(UnknownKnobs, ACnnTraceGetsSamplesPerSecondFromItsSamplesPerStep) {
  nlohmann::json cnn = {{"strategy", "ddp"}, {"world_size", 2}};
  auto m = ta::analyze(trial("resnet", cnn, kDataBound));
  EXPECT_NE(std::find(m.unknown_knobs.begin(), m.unknown_knobs.end(), "samples_per_step"), m.unknown_knobs.end());
  EXPECT_EQ(m.samples_per_step, 0.0);
  EXPECT_EQ(m.samples_per_s_total.n, 0u);

  ASSERT_TRUE(tc::set_known_setting(cnn, "samples_per_step", "64").empty());
  EXPECT_TRUE(tc::set_known_setting(cnn, "samples_per_step", "-1").size() == 1) << "a negative count is refused";
  m = ta::analyze(trial("resnet", cnn, kDataBound));
  EXPECT_EQ(m.samples_per_step, 128.0);  // 64 on each of 2 ranks
  ASSERT_GT(m.samples_per_s_total.n, 0u);
  // The measured step (100 ms, synthetic_trial's steps) carries 128 samples: 1280 samples/s.
  EXPECT_NEAR(m.samples_per_s_total.median, 128.0 / (m.step_ms.median / 1000.0), 1e-6);
  EXPECT_NEAR(m.samples_per_s_per_gpu.median, m.samples_per_s_total.median / 2, 1e-6);
  EXPECT_EQ(m.tokens_per_step, 0.0);  // samples are not tokens

  // The comparison and the report: a samples/s row beside the step time.
  auto other = cnn;
  ASSERT_TRUE(tc::set_known_setting(other, "samples_per_step", "32").empty());
  const auto report = ta::make_report({trial("resnet-64", cnn, kDataBound), trial("resnet-32", other, kDataBound)});
  const ta::MetricRow* row = nullptr;
  for (const auto& r : report.comparison.metrics)
    if (r.key == "samples_per_s_total") row = &r;
  ASSERT_NE(row, nullptr) << "no samples/s row in the comparison";
  EXPECT_EQ(row->unit, "samples/s");
  const std::string text = ta::render_text(report);
  EXPECT_NE(text.find("samples/s"), std::string::npos) << text;
  // The verdict compares the samples too (a script counted in samples reads the same): half the
  // samples in the same step time is half the throughput, not "the tokens are unknown".
  ASSERT_EQ(report.comparison.throughput_statements.size(), 1u);
  const std::string verdict = report.comparison.throughput_statements[0];
  EXPECT_NE(verdict.find("0.50x the samples (64 vs 128)"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("samples/s"), std::string::npos) << verdict;
  EXPECT_EQ(verdict.find("unknown"), std::string::npos) << verdict;
}
