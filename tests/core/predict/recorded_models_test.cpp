// Predictions against the model shapes measured on one H200 (tests/data/models-h200, README there):
// every preset and the head-size customs, at 4 layers of their own per-layer shape and at full
// depth, in `compile fused`. Memory from the model alone; step time calibrated on the example
// session (sessions/h200-7b.tbsession, LLaMA-2-7B trials only), as `tunebench-cli predict
// --evidence` does. The measured side comes only from the logs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/predict/evidence.h"
#include "core/predict/memory_model.h"
#include "core/predict/predictor.h"
#include "core/predict/target.h"
#include "tests/core/predict/model_runs.h"

#ifdef TUNEBENCH_HAVE_STORE
#include "tests/core/predict/example_session.h"
#endif

namespace tp = tunebench::predict;
using tunebench::test_data::model_runs;
using tunebench::test_data::runs_in;

namespace {

// Every preset and head-size custom at full depth, bf16 and `amp fp8` `compile fused`, with the
// worker the step model describes now (README there): the sweep, two more rounds in second-call,
// four of llama3.2-1b in third-call, llama3.2-1b, llama3.1-8b and 7b with the head's gradient
// scaled in place in head-scale, and nine rows with the GEMM algorithm search and without it
// (TUNEBENCH_GEMM=cublas) in gemm-search/between-steps, the 7B's in six more rounds, and
// llama3.2-1b at 40 steps in fp8-full/forty-steps; the block's fused residual paths against the
// commit before them (block-fusions/ab) and the search's two timings (block-fusions/search-under-load);
// Llama-3.2-1B with its tied lookup's gradient as the batch's rows, against the commit before
// (tied-lookup/ab); with the fp8 norms writing float8 (norm-fp8/ab, the 7B's in ab-7b, every
// preset once in models-fp8); and the 7B and Llama-3.2-1B with grad_dtype bf16 and fp32 (grad-dtype,
// the 7B's in three more rounds in its second-call); Llama-3.2-1B and hd80 in four rounds of fp8
// against bf16 in fp8-full/session-13.
const std::vector<std::string> kFullDepthNow = {"models-h200/fp8-full",
                                                "models-h200/fp8-full/second-call",
                                                "models-h200/fp8-full/third-call",
                                                "models-h200/fp8-full/head-scale",
                                                "models-h200/gemm-search/between-steps",
                                                "models-h200/gemm-search/7b-six-rounds",
                                                "models-h200/fp8-full/forty-steps",
                                                "models-h200/block-fusions/ab",
                                                "models-h200/block-fusions/search-under-load",
                                                "models-h200/tied-lookup/ab",
                                                "models-h200/norm-fp8/ab",
                                                "models-h200/norm-fp8/ab-7b",
                                                "models-h200/norm-fp8/models-fp8",
                                                "models-h200/grad-dtype",
                                                "models-h200/grad-dtype/second-call",
                                                "models-h200/fp8-full/session-13"};

}  // namespace

TEST(RecordedModels, PeakMemoryWithinThreePercentOnEveryShape) {
  const auto all = model_runs();
  ASSERT_FALSE(all.empty()) << "no event log in tests/data/models-h200";
  for (const auto& r : all) {
    tp::MemoryOptions options;
    options.device_memory_bytes = int64_t{150109880320};  // the H200 the runs reported
    const double predicted = static_cast<double>(tp::predict_memory(r.config, options).peak_bytes);
    const double error = predicted / static_cast<double>(r.peak_bytes) - 1;
    EXPECT_LT(std::abs(error), 0.03) << r.name << ": predicted " << predicted / (1 << 30) << " GiB, measured "
                                     << static_cast<double>(r.peak_bytes) / (1 << 30) << " GiB";
  }
}

// The 7B `compile fused` at micro-batch 1, 2 and 3 (models-h200/micro-batch, README there): the peak
// grows with the activations, the optimizer's share of the step shrinks.
TEST(RecordedModels, PeakMemoryWithinThreePercentAtEveryMicroBatch) {
  const auto all = model_runs("models-h200/micro-batch");
  ASSERT_FALSE(all.empty());
  for (const auto& r : all) {
    tp::MemoryOptions options;
    options.device_memory_bytes = int64_t{150109880320};
    const double predicted = static_cast<double>(tp::predict_memory(r.config, options).peak_bytes);
    EXPECT_NEAR(predicted / static_cast<double>(r.peak_bytes), 1.0, 0.03) << r.name;
  }
}

// The full-depth runs of kFullDepthNow, and of the workers before them (fp8-full/swiglu-casts: the
// feed-forward's casts only; adamw-copies: AdamW writes the float8 weights; casts-in-forward: two
// rounds, and the two smallest at micro-batch 4): the peaks are the same both ways, the weights'
// float8 casts taking the gradients' place as the bf16 copies do.
TEST(RecordedModels, PeakMemoryWithinThreePercentInFp8AndBf16AtFullDepth) {
  auto all = runs_in(kFullDepthNow);
  for (auto& r :
       runs_in({"models-h200/fp8-full/swiglu-casts", "models-h200/fp8-full/adamw-copies",
                "models-h200/fp8-full/casts-in-forward", "models-h200/fp8-full/casts-in-forward/micro-batch-4"}))
    all.push_back(std::move(r));
  int fp8 = 0;
  for (const auto& r : all) {
    fp8 += r.config.amp == tunebench::config::Amp::Fp8;
    tp::MemoryOptions options;
    options.device_memory_bytes = int64_t{150109880320};
    const double predicted = static_cast<double>(tp::predict_memory(r.config, options).peak_bytes);
    EXPECT_NEAR(predicted / static_cast<double>(r.peak_bytes), 1.0, 0.03) << r.name;
  }
  EXPECT_GT(fp8, 0) << "no run in amp fp8";
  EXPECT_LT(fp8, static_cast<int>(all.size())) << "no run in bf16";
}

#ifdef TUNEBENCH_HAVE_STORE
TEST(RecordedModels, StepTimeFromTheExampleSessionOnEveryShape) {
  tp::Evidence evidence;
  tp::testing::add_example_session(evidence);
  const auto basis = evidence.select([](const tp::MeasuredTrial&) { return true; });
  tp::Target target;
  target.gpu = "h200";
  auto all = runs_in({"models-h200", "models-h200/micro-batch"});
  for (auto& r : runs_in(kFullDepthNow)) all.push_back(std::move(r));
  for (const auto& r : all) {
    const auto scenario = tp::scenario_for(r.config, target, basis);
    const auto p = tp::predict_scenario(scenario.scenario, basis);
    ASSERT_TRUE(p.step) << r.name;
    const double error = p.step->step_ms / r.step_ms - 1;
    EXPECT_LT(std::abs(error), 0.10) << r.name << ": predicted " << p.step->step_ms << " ms, measured " << r.step_ms;
  }
}
#endif
