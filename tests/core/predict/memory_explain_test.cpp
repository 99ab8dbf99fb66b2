// Measured memory by category against the prediction, and an out-of-memory explained, on a
// synthetic out-of-memory record built from the prediction itself with one category grown.
#include "core/predict/memory_explain.h"

#include <gtest/gtest.h>

#include <set>

#include "core/metrics/memory_categories.h"

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
  EXPECT_NE(e->text.find("no category held more than the prediction allowed; the prediction itself needs"),
            std::string::npos)
      << e->text;
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
  const auto cmp = tp::compare_memory(m, predicted);
  int64_t measured = 0, pred = 0;
  for (const auto& r : cmp.rows) {
    measured += r.measured_bytes;
    pred += r.predicted_bytes;
  }
  EXPECT_EQ(measured, m.allocated_bytes());
  EXPECT_NEAR(static_cast<double>(pred), static_cast<double>(predicted.peak_bytes), 1.0 * static_cast<double>(predicted.at_peak.size()));
  EXPECT_TRUE(cmp.unknown_terms.empty());
}

TEST(MemoryExplain, TheViewsLineNamesEachCategoryThatHoldsOrWasPredicted) {
  tp::MemoryComparison m;
  m.rows = {{"parameters", 2 * kExplainGiB, kExplainGiB, {}}, {"gradients", 0, 0, {}}, {"activations", 0, kExplainGiB / 2, {}}};
  EXPECT_EQ(tp::memory_line(m, "backward", 13, kExplainGiB / 4),
            "memory at the backward of step 13: parameters 2.00 GiB (predicted 1.00 GiB), activations 0.00 GiB "
            "(predicted 0.50 GiB); reserved, held by no tensor 0.25 GiB");
}
