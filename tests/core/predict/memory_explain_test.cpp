// Measured memory by category against the prediction, and an out-of-memory explained, on a
// synthetic out-of-memory record built from the prediction itself with one category grown.
#include "core/predict/memory_explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/metrics/memory_categories.h"
#include "core/telemetry/allocator_snapshot_file.h"

namespace tc = tunebench::config;
namespace tp = tunebench::predict;
namespace tpr = tunebench::protocol;

namespace {
constexpr int64_t kExplainGiB = int64_t{1} << 30;

tc::TrialConfig explain_7b() {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  c.checkpointing = false;
  return c;
}

// Measured categories equal to the prediction's, category by category (what a perfect prediction
// would have measured), in the given phase.
tpr::MemoryCategories as_predicted(const tc::TrialConfig& c, const std::string& phase) {
  const auto cmp = tp::compare_memory(tpr::MemoryCategories{}, tp::predict_memory(c));
  tpr::MemoryCategories m;
  m.phase = phase;
  for (const auto& row : cmp.rows) {
    int64_t* into = row.category == "parameters"        ? &m.parameters_bytes
                    : row.category == "gradients"       ? &m.gradients_bytes
                    : row.category == "optimizer state" ? &m.optimizer_bytes
                    : row.category == "activations"     ? &m.activations_bytes
                    : row.category == "temporaries"     ? &m.temporaries_bytes
                    : row.category == "communication"   ? &m.communication_bytes
                                                        : &m.unattributed_bytes;
    *into += row.predicted_bytes;
  }
  return m;
}

nlohmann::json oom_details(const tpr::MemoryCategories& m, int64_t step, int64_t requested) {
  return {{"memory_categories", tpr::memory_categories_to_json(m)},
          {"oom_phase", m.phase},
          {"oom_step", step},
          {"requested_bytes", requested}};
}
}  // namespace

TEST(MemoryExplain, EveryPredictedTermHasAMeasuredCategory) {
  std::set<std::string> seen;
  for (auto strategy : {tc::Strategy::Single, tc::Strategy::Ddp, tc::Strategy::Fsdp})
    for (bool ckpt : {false, true})
      for (auto amp : {tc::Amp::Bf16, tc::Amp::Fp8})
        for (int accum : {1, 2}) {
          tc::TrialConfig c = explain_7b();
          c.strategy = strategy;
          c.world_size = strategy == tc::Strategy::Single ? 1 : 2;
          c.checkpointing = ckpt;
          c.amp = amp;
          c.grad_accum = accum;
          if (strategy == tc::Strategy::Ddp) c.compression = tc::Compression::Bf16;
          for (auto compile : {tc::Compile::Off, tc::Compile::Fused, tc::Compile::Graph})
            for (bool tied : {false, true}) {
              tc::TrialConfig v = c;
              v.compile = compile;
              v.dims.tie_embeddings = tied;
              if (!tc::validate(v).empty()) continue;
              for (const auto& t : tp::predict_memory(v).at_peak) {
                seen.insert(t.name);
                EXPECT_TRUE(tp::category_of_term(t.name)) << "no measured category for the predicted term '" << t.name << "'";
              }
            }
        }
  EXPECT_GE(seen.size(), 8u) << "the grid should meet most of the memory model's terms";
  EXPECT_FALSE(tp::category_of_term("a term nobody predicts"));
}

TEST(MemoryExplain, TheCategoryThatGrewPastThePredictionIsNamedWithItsFix) {
  const tc::TrialConfig c = explain_7b();
  const tp::MemoryPrediction predicted = tp::predict_memory(c);
  tpr::MemoryCategories m = as_predicted(c, "backward");
  m.activations_bytes += 20 * kExplainGiB;  // the activations grew past what the prediction allowed
  m.temporaries_bytes += 1 * kExplainGiB;
  const int64_t device = predicted.device_needed_bytes + 2 * kExplainGiB;
  const auto e = tp::explain_oom(c, oom_details(m, 0, 3 * kExplainGiB), device);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->category, "activations");
  EXPECT_EQ(e->excess_bytes, 20 * kExplainGiB);
  EXPECT_EQ(e->measured_bytes, m.activations_bytes);
  EXPECT_EQ(e->predicted_bytes, m.activations_bytes - 20 * kExplainGiB);
  EXPECT_EQ(e->phase, "backward");
  EXPECT_EQ(e->step, 0);
  EXPECT_EQ(e->requested_bytes, 3 * kExplainGiB);
  // The fixes for activations, each with the prediction of its changed configuration.
  ASSERT_FALSE(e->fixes.empty());
  std::set<std::string> knobs;
  for (const auto& f : e->fixes) {
    knobs.insert(f.knob);
    tc::TrialConfig changed = c;
    if (f.knob == "checkpointing") changed.checkpointing = true;
    if (f.knob == "micro_batch") {
      changed.micro_batch = c.micro_batch / 2;
      changed.grad_accum = c.grad_accum * 2;
    }
    const auto p = tp::predict_memory(changed, [&] {
      tp::MemoryOptions o;
      o.device_memory_bytes = device;
      return o;
    }());
    EXPECT_EQ(f.predicted_peak_bytes, p.peak_bytes) << f.knob;
    EXPECT_EQ(f.predicted_device_needed_bytes, p.device_needed_bytes) << f.knob;
    EXPECT_EQ(f.fits, tp::fit_of(p, device) == tp::Fit::Fits) << f.knob;
  }
  EXPECT_TRUE(knobs.count("checkpointing"));
  if (c.micro_batch > 1) {
    EXPECT_TRUE(knobs.count("micro_batch"));
  }
  for (size_t i = 1; i < e->fixes.size(); ++i)
    EXPECT_TRUE(e->fixes[i - 1].fits >= e->fixes[i].fits) << "fixes that fit come first";
  EXPECT_NE(e->text.find("Out of memory in the backward of step 0: activations held"), std::string::npos) << e->text;
  EXPECT_NE(e->text.find("20.00 GiB more"), std::string::npos) << e->text;
  EXPECT_NE(e->text.find("Fix: " + e->fixes.front().change), std::string::npos) << e->text;
}

TEST(MemoryExplain, OptimizerStateGrownPointsAtShardingOnSeveralRanks) {
  tc::TrialConfig c = explain_7b();
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  tpr::MemoryCategories m = as_predicted(c, "optimizer");
  m.optimizer_bytes += 8 * kExplainGiB;
  const auto e = tp::explain_oom(c, oom_details(m, 4, 0), 80 * kExplainGiB);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->category, "optimizer state");
  EXPECT_EQ(e->phase, "optimizer");
  bool fsdp = false;
  for (const auto& f : e->fixes) fsdp = fsdp || f.knob == "strategy";
  EXPECT_TRUE(fsdp);
}

TEST(MemoryExplain, WhenNoCategoryGrewThePredictionItselfIsBlamed) {
  const tc::TrialConfig c = explain_7b();
  const tpr::MemoryCategories m = as_predicted(c, "forward");
  const auto e = tp::explain_oom(c, oom_details(m, 0, kExplainGiB), 16 * kExplainGiB);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->category, "");
  EXPECT_NE(e->text.find("no category held 0.25 GiB or more beyond what the prediction allowed (optimizer state had "
                         "reached 50.21 GiB of the 50.21 GiB predicted at the peak); the prediction itself needs"),
            std::string::npos)
      << e->text;
}

// The prediction fits the device, and no category grew past it: the memory went to what no category
// counts, and the text says so rather than that the prediction needs more than the device.
TEST(MemoryExplain, WhenThePredictionFitsTheRestIsWhatNoCategoryCounts) {
  const tc::TrialConfig c = explain_7b();
  const tpr::MemoryCategories m = as_predicted(c, "backward");
  const int64_t device = tp::predict_memory(c).device_needed_bytes + 4 * kExplainGiB;
  const auto e = tp::explain_oom(c, oom_details(m, 2, kExplainGiB), device);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->category, "");
  EXPECT_NE(e->text.find("the prediction fits the device"), std::string::npos) << e->text;
  EXPECT_EQ(e->text.find("the prediction itself needs"), std::string::npos) << e->text;
}

// The micro-batch fix halves while the micro-batch stays even (the same tokens per step); an odd
// one is halved once at most, and the text never claims the same tokens for an uneven split.
TEST(MemoryExplain, TheMicroBatchFixKeepsTheTokensPerStep) {
  tc::TrialConfig c = explain_7b();
  c.micro_batch = 6;
  tpr::MemoryCategories m = as_predicted(c, "forward");
  m.activations_bytes += 40 * kExplainGiB;
  const auto e = tp::explain_oom(c, oom_details(m, 0, kExplainGiB), 80 * kExplainGiB);
  ASSERT_TRUE(e);
  for (const auto& f : e->fixes) {
    if (f.knob != "micro_batch") continue;
    EXPECT_NE(f.change.find("micro_batch 6 -> 3 with grad_accum 1 -> 2"), std::string::npos) << f.change;
  }
}

TEST(MemoryExplain, DetailsWithoutTheAllocatorsStateExplainNothing) {
  EXPECT_FALSE(tp::explain_oom(explain_7b(), nlohmann::json{{"requested_bytes", 5}}, 0));
  EXPECT_THROW(tp::explain_oom(explain_7b(), nlohmann::json{{"memory_categories", {{"activations_bytes", -1}}}}, 0),
               std::invalid_argument);
}

TEST(MemoryExplain, TheComparisonSumsBothSides) {
  const tc::TrialConfig c = explain_7b();
  const auto predicted = tp::predict_memory(c);
  const auto m = as_predicted(c, "backward");
  auto sums = [&](const tp::MemoryComparison& cmp) {
    int64_t measured = 0, pred = 0;
    for (const auto& r : cmp.rows) {
      measured += r.measured_bytes;
      pred += r.predicted_bytes;
    }
    EXPECT_EQ(measured, m.allocated_bytes());
    EXPECT_TRUE(cmp.unknown_terms.empty());
    return static_cast<double>(pred);
  };
  // A sampled step's backward end: the prediction's terms at that moment.
  double at_backward_end = 0;
  for (const auto& t : predicted.at_backward_end) at_backward_end += t.bytes;
  EXPECT_NEAR(sums(tp::compare_memory(m, predicted)), at_backward_end,
              1.0 * static_cast<double>(predicted.at_backward_end.size()));
  // What the peak allowed (an out-of-memory's comparison).
  EXPECT_NEAR(sums(tp::compare_memory(m, predicted, /*at_peak=*/true)), static_cast<double>(predicted.peak_bytes),
              1.0 * static_cast<double>(predicted.at_peak.size()));
}

TEST(MemoryExplain, TheViewsLineNamesEachCategoryThatHoldsOrWasPredicted) {
  tp::MemoryComparison m;
  m.rows = {{"parameters", 2 * kExplainGiB, kExplainGiB, {}}, {"gradients", 0, 0, {}}, {"activations", 0, kExplainGiB / 2, {}}};
  EXPECT_EQ(tp::memory_line(m, "backward", 13, kExplainGiB / 4),
            "memory at the backward of step 13: parameters 2.00 GiB (predicted 1.00 GiB), activations 0.00 GiB "
            "(predicted 0.50 GiB); reserved, held by no tensor 0.25 GiB");
}

namespace {
// Llama-3.2-1B on one H100 as `scripts/gpu-bench.sh hardware` ran it (bf16, sequence 2048, no
// checkpointing), at `micro_batch` in `compile`.
tc::TrialConfig h100_llama_1b(int micro_batch, tc::Compile compile) {
  tc::TrialConfig c = explain_7b();
  EXPECT_FALSE(tc::set_knob(c, "model", "llama3.2-1b").has_value());
  c.micro_batch = micro_batch;
  c.seq_len = 2048;
  c.amp = tc::Amp::Bf16;
  c.compile = compile;
  return c;
}
tp::MemoryOptions h100() {
  tp::MemoryOptions o;
  o.device_memory_bytes = int64_t{85'520'809'984};  // an H100 80GB HBM3 as CUDA reports it
  return o;
}
}  // namespace

// The H100's recorded snapshot (tests/data/memory: eager, micro-batch 4, read at the forward's end
// of step 23) against the prediction at that moment: each category within 5 %. Against the terms at
// the predicted peak (mid-backward: gradient temporaries, the tied head's gradient) it was not.
TEST(MemoryExplain, TheRecordedH100SnapshotMatchesThePredictionAtTheForwardsEnd) {
  const auto file = tunebench::telemetry::read_snapshot_file(std::string(TUNEBENCH_TEST_DATA_DIR) +
                                                             "/memory/h100-llama3.2-1b-single.json");
  const tpr::MemoryCategories measured = tunebench::metrics::attribute_memory(file.snapshot, file.meta.phase);
  ASSERT_EQ(measured.phase, "forward");
  const auto cmp = tp::compare_memory(measured, tp::predict_memory(h100_llama_1b(4, tc::Compile::Off), h100()));
  EXPECT_EQ(cmp.predicted_at, "end of forward");
  int compared = 0;
  for (const auto& row : cmp.rows) {
    if (row.measured_bytes < kExplainGiB && row.predicted_bytes < kExplainGiB) continue;  // under a GiB both
    ++compared;
    EXPECT_NEAR(static_cast<double>(row.predicted_bytes) / static_cast<double>(row.measured_bytes), 1.0, 0.05)
        << row.category << ": measured " << row.measured_bytes << ", predicted " << row.predicted_bytes;
  }
  EXPECT_EQ(compared, 3) << "parameters, optimizer state and activations";
}

// compile fused with AdamW's weight copies (one GPU, bf16): from step 1 on the forward reads the
// copies AdamW wrote in the step before, which the worker's rule counts unattributed (older than
// the step), not activations; the loss's logits are gone at the forward's end. The peak keeps step
// 0's casts.
TEST(MemoryExplain, AtTheForwardsEndAdamWsWeightCopiesAreOlderThanTheStep) {
  const tp::MemoryPrediction p = tp::predict_memory(h100_llama_1b(8, tc::Compile::Fused), h100());
  ASSERT_TRUE(p.weight_copies);
  auto has = [](const std::vector<tp::MemoryTerm>& terms, const std::string& name) {
    return std::any_of(terms.begin(), terms.end(), [&](const tp::MemoryTerm& t) { return t.name == name; });
  };
  const std::string casts = "weight copies in the compute dtype (float8 for the blocks under amp fp8)";
  const std::string copies = "weights for the next forward, 16-bit or float8 (written by AdamW)";
  EXPECT_FALSE(has(p.at_forward_end, casts));
  EXPECT_TRUE(has(p.at_forward_end, copies));
  EXPECT_FALSE(has(p.at_backward_end, copies)) << "each block's backward freed the copies it read";
  EXPECT_FALSE(has(p.at_forward_end, "logits while the loss runs"));
  EXPECT_TRUE(has(p.at_peak, casts)) << "step 0, which runs without copies, is in the peak";

  // The copies still held at the forward's end are the blocks' (saved for their backward): the
  // fused loss read the tied table's copy (128256 x 2048 in bf16, 0.49 GiB) and let it go. On the
  // H100 (2026-12-07, micro-batch 8, docs/BENCHMARKS.md) the step's unattributed blocks at that
  // moment were 1.88 GiB; with the table's copy the prediction said 2.30.
  tpr::MemoryCategories forward_end;
  forward_end.phase = "forward";
  const auto cmp = tp::compare_memory(forward_end, p);
  int unattributed = 0;
  for (const auto& row : cmp.rows) {
    if (row.category != "unattributed") continue;
    ++unattributed;
    EXPECT_NEAR(static_cast<double>(row.predicted_bytes) / (1.88 * kExplainGiB), 1.0, 0.05)
        << "predicted " << row.predicted_bytes;
  }
  EXPECT_EQ(unattributed, 1);
  // An out-of-memory compares with what the peak allowed, whatever its phase.
  EXPECT_EQ(tp::compare_memory(forward_end, p, /*at_peak=*/true).predicted_at, p.peak_at);
}

// The H100's induced out-of-memory (2026-12-07, scripts/gpu-bench.sh hardware: Llama-3.2-1B `compile
// fused`, bf16, micro-batch 64, sequence 2048): the allocator's state the worker recorded when a
// 768 MiB request failed in the forward of step 0, attributed from its raw blocks here, explained.
TEST(MemoryExplain, TheRecordedH100OutOfMemoryIsExplained) {
  const auto file = tunebench::telemetry::read_snapshot_file(std::string(TUNEBENCH_TEST_DATA_DIR) +
                                                             "/memory/h100-llama3.2-1b-oom-mb64.json");
  ASSERT_EQ(file.meta.phase, "oom");
  // Recorded before the worker marked the blocks a forward has allocated so far at an
  // out-of-memory inside it (memory_sampler.cpp, m_in_tracked_forward): its forward_blocks are
  // empty, and the step's blocks read as 63.8 GiB of temporaries. What the worker records now:
  // every block since the forward began, here all of the step's but the batch's (1 MiB).
  tunebench::metrics::AllocatorSnapshot snapshot = file.snapshot;
  ASSERT_TRUE(snapshot.forward_blocks.empty());
  snapshot.forward_blocks = snapshot.step_blocks;
  const tpr::MemoryCategories m = tunebench::metrics::attribute_memory(snapshot, "forward");
  tc::TrialConfig c = h100_llama_1b(64, tc::Compile::Fused);
  const auto e = tp::explain_oom(c, oom_details(m, 0, int64_t{768} << 20), h100().device_memory_bytes);
  ASSERT_TRUE(e);
  // The forward ran out with activations at 63.8 GiB of the 166 GiB the prediction gives them: no
  // category grew past it, the prediction itself needs more than the card, and checkpointing fits.
  EXPECT_EQ(e->category, "") << e->text;
  EXPECT_EQ(e->phase, "forward");
  EXPECT_NE(e->text.find("(activations had reached 63.83 GiB of the 166.08 GiB predicted at the peak)"),
            std::string::npos)
      << e->text;
  ASSERT_FALSE(e->fixes.empty());
  EXPECT_EQ(e->fixes.front().knob, "checkpointing") << e->text;
  EXPECT_TRUE(e->fixes.front().fits);
  EXPECT_NE(e->text.find("Fix: checkpointing on"), std::string::npos) << e->text;
  // The micro-batch is halved until it fits too: the largest that fits, with its prediction.
  const auto mb =
      std::find_if(e->fixes.begin(), e->fixes.end(), [](const tp::MemoryFix& f) { return f.knob == "micro_batch"; });
  ASSERT_NE(mb, e->fixes.end());
  EXPECT_TRUE(mb->fits) << mb->change;
  EXPECT_LT(mb->predicted_device_needed_bytes, h100().device_memory_bytes);
}
