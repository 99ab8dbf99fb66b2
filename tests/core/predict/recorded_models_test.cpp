// Predictions against the model shapes measured on one H200 (tests/data/models-h200, README there):
// every preset and the head-size customs, at 4 layers of their own per-layer shape and at full
// depth, in `compile fused`. Memory from the model alone; step time calibrated on the example
// session (sessions/h200-7b.tbsession, LLaMA-2-7B trials only), as `tunebench-cli predict
// --evidence` does. The measured side comes only from the logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/predict/evidence.h"
#include "core/predict/memory_model.h"
#include "core/predict/predictor.h"
#include "core/predict/target.h"
#include "core/protocol/trial_log.h"

#ifdef TUNEBENCH_HAVE_STORE
#include "tests/core/predict/example_session.h"
#endif

namespace tp = tunebench::predict;
namespace fs = std::filesystem;

namespace {

struct ModelRun {
  std::string name;
  tunebench::config::TrialConfig config;
  double step_ms = 0;      // median of the measured steps
  int64_t peak_bytes = 0;  // the allocator's peak: the largest phase peak the worker logged
};

// The runs were made with TUNEBENCH_MEMORY_PHASES=1, which resets the allocator's peak at every
// phase boundary and logs each phase's peak: the step's peak is the largest of them.
int64_t logged_peak(const tunebench::protocol::RankLog& rank) {
  static const std::regex phase(R"((\w+) peak (\d+) then (\d+);)");
  int64_t peak = 0;
  for (const auto& log : rank.logs)
    for (std::sregex_iterator it(log.value.message.begin(), log.value.message.end(), phase), end; it != end; ++it)
      peak = std::max<int64_t>(peak, std::stoll((*it)[2].str()));
  for (const auto& s : rank.steps) peak = std::max(peak, s.memory.peak_bytes);
  return peak;
}

// The event logs directly in tests/data/<folder> (not its subfolders).
std::vector<ModelRun> model_runs(const std::string& folder = "models-h200") {
  std::vector<ModelRun> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(TUNEBENCH_TEST_DATA_DIR) + "/" + folder))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const auto log = tunebench::protocol::read_trial_log_file(f.string());
    const auto& rank = log.ranks.at(0);
    ModelRun r;
    r.name = f.stem().string();
    r.config = tunebench::config::from_json(log.config()).config;
    std::vector<double> steps;
    for (const auto* s : log.measured_steps(0)) steps.push_back(s->step_ms);
    std::sort(steps.begin(), steps.end());
    r.step_ms = steps.empty() ? 0 : (steps[(steps.size() - 1) / 2] + steps[steps.size() / 2]) / 2;
    r.peak_bytes = logged_peak(rank);
    out.push_back(r);
  }
  return out;
}

// The event logs of several folders of tests/data, in that order.
std::vector<ModelRun> runs_in(const std::vector<std::string>& folders) {
  std::vector<ModelRun> out;
  for (const auto& folder : folders)
    for (auto& r : model_runs(folder)) out.push_back(std::move(r));
  return out;
}

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

// Every step's loss of rank 0 in a worker's event log.
std::vector<double> step_losses(const std::string& file) {
  const auto log = tunebench::protocol::read_trial_log_file(file);  // held: the steps live in it
  std::vector<double> out;
  for (const auto& s : log.ranks.at(0).steps) out.push_back(s.loss);
  return out;
}

// An `ab` call's tiny runs (`dir`/tiny/): on each path, in bf16 and fp8, this worker's 12 losses are
// the other worker's to the bit.
void expect_tiny_pairs_same(const std::string& dir, const std::vector<std::string>& paths) {
  for (const std::string amp : {"bf16", "fp8"})
    for (const auto& path : paths) {
      const std::string stem = dir + "tiny/tiny-" + amp + "-" + path;
      const auto mine = step_losses(stem + "-this.jsonl");
      ASSERT_EQ(mine.size(), 12u) << stem;
      EXPECT_EQ(mine, step_losses(stem + "-against.jsonl")) << stem;
    }
}

// An `ab` call's runs: each "-this-" run held the peak of its "-against-" run, or up to `more`
// bytes above it.
void expect_peaks_of_pairs_equal(const std::vector<ModelRun>& rows, int64_t more = 0) {
  for (const auto& r : rows) {
    const auto at = r.name.find("-this-");
    if (at == std::string::npos) continue;
    const std::string other = r.name.substr(0, at) + "-against-" + r.name.substr(at + 6);
    const auto match = std::find_if(rows.begin(), rows.end(), [&](const ModelRun& o) { return o.name == other; });
    ASSERT_NE(match, rows.end()) << other;
    EXPECT_GE(r.peak_bytes, match->peak_bytes) << r.name;
    EXPECT_LE(r.peak_bytes, match->peak_bytes + more) << r.name;
  }
}

// A kernel-check output's rows that match `ok_row` (which ends in "ok"), and its FAIL lines.
std::pair<int, int> kernel_check_rows(const std::string& file, const std::regex& ok_row) {
  std::ifstream check(file);
  EXPECT_TRUE(check) << file;
  int rows = 0, failed = 0;
  for (std::string line; std::getline(check, line);) {
    rows += std::regex_search(line, ok_row);
    failed += line.find("FAIL") != std::string::npos;
  }
  return {rows, failed};
}

}  // namespace

TEST(RecordedModels, PeakMemoryWithinThreePercentOnEveryShape) {
  const auto all = model_runs();
  ASSERT_EQ(all.size(), 16u) << "tests/data/models-h200 holds 9 rows at 4 layers and 7 at full depth";
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
  ASSERT_EQ(all.size(), 6u);
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
  ASSERT_EQ(model_runs("models-h200/fp8-full").size(), 18u) << "9 models x {bf16, fp8}";
  auto all = runs_in(kFullDepthNow);
  for (auto& r :
       runs_in({"models-h200/fp8-full/swiglu-casts", "models-h200/fp8-full/adamw-copies",
                "models-h200/fp8-full/casts-in-forward", "models-h200/fp8-full/casts-in-forward/micro-batch-4"}))
    all.push_back(std::move(r));
  ASSERT_EQ(all.size(), 320u);
  int fp8 = 0;
  for (const auto& r : all) {
    fp8 += r.config.amp == tunebench::config::Amp::Fp8;
    tp::MemoryOptions options;
    options.device_memory_bytes = int64_t{150109880320};
    const double predicted = static_cast<double>(tp::predict_memory(r.config, options).peak_bytes);
    EXPECT_NEAR(predicted / static_cast<double>(r.peak_bytes), 1.0, 0.03) << r.name;
  }
  EXPECT_EQ(fp8, 133);
}

// The GEMM algorithm search changes speed only (core/engine/kernels/gemm_search.h). Each row's runs
// with the search hold the same peak as those with cuBLAS's pick: the search's scratch is between
// steps and not charged. The tiny model in bf16 and fp8, with the search, without it and with it
// again, computes the same loss, to the last bit printed, at every step; its logs say the search
// measured shapes (a run whose GEMMs were never searched would prove nothing).
TEST(RecordedModels, GemmSearchLeavesThePeakAndTheLossesAsTheyWere) {
  const auto all = runs_in({"models-h200/gemm-search/between-steps", "models-h200/gemm-search/7b-six-rounds"});
  ASSERT_EQ(all.size(), 66u) << "9 rows x {search, cublas} x 3 rounds, and the 7B's 6 more rounds";
  int pairs = 0;
  const std::string searched = "-search-";
  for (const auto& r : all) {
    const auto at = r.name.find(searched);
    if (at == std::string::npos) continue;
    const std::string other = r.name.substr(0, at) + "-cublas-" + r.name.substr(at + searched.size());
    const auto match = std::find_if(all.begin(), all.end(), [&](const ModelRun& o) { return o.name == other; });
    ASSERT_NE(match, all.end()) << other;
    EXPECT_NEAR(static_cast<double>(r.peak_bytes) / static_cast<double>(match->peak_bytes), 1.0, 0.001) << r.name;
    ++pairs;
  }
  EXPECT_EQ(pairs, 33);

  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/gemm-search/tiny/";
  static const std::regex measured(R"(GEMM algorithms: (\d+) shapes measured)");
  for (const std::string amp : {"bf16", "fp8"}) {
    std::vector<std::vector<double>> losses;
    for (const std::string run : {"search", "cublas", "search-again"}) {
      const auto log = tunebench::protocol::read_trial_log_file(dir + "tiny-" + amp + "-" + run + ".jsonl");
      const auto& rank = log.ranks.at(0);
      losses.emplace_back();
      for (const auto& s : rank.steps) losses.back().push_back(s.loss);
      int shapes = 0;
      std::smatch m;
      for (const auto& l : rank.logs)
        if (std::regex_search(l.value.message, m, measured)) shapes = std::stoi(m[1].str());
      if (run == "cublas")
        EXPECT_EQ(shapes, 0) << amp;
      else
        EXPECT_GT(shapes, 0) << amp << " " << run << ": the search measured no shape";
    }
    ASSERT_EQ(losses[0].size(), 12u) << amp;
    EXPECT_EQ(losses[0], losses[1]) << amp;
    EXPECT_EQ(losses[0], losses[2]) << amp;
  }
}

// The block's fused residual paths (rms_norm_keep, linear_residual, residual_add) change no number:
// `gpu-bench.sh ab` ran the tiny model in bf16 and fp8 on four paths with this worker and with the
// commit before it, and every pair computed the same 12 losses to the bit; the full-depth rows of
// both workers hold the same peak; the kernel check compared each new path with what it replaced,
// byte for byte. (The 7B's own losses differ from run to run of one worker, the attention and
// embedding backward adding in no fixed order, so they prove nothing here.)
TEST(RecordedModels, BlockFusionsChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/block-fusions/ab/";
  expect_tiny_pairs_same(dir, {"fused", "graph", "ckpt", "accum"});

  const auto rows = model_runs("models-h200/block-fusions/ab");
  ASSERT_EQ(rows.size(), 12u) << "7B bf16, Llama-3.2-1B bf16 and fp8, x {this, against} x 2 rounds";
  expect_peaks_of_pairs_equal(rows);

  const auto [fused_rows, failed] = kernel_check_rows(
      dir + "kernel-check.txt", std::regex(R"(^(residual_add|rms_norm_keep|linear_residual)\s.*\sok$)"));
  EXPECT_EQ(fused_rows, 5) << "residual_add out, rms_norm_keep y and dx,dw, linear_residual out and dx,dw,dr";
  EXPECT_EQ(failed, 0);
}

// The fp8 linears' float8 products through the search (gemm::scaled_mm) change no number either:
// the tiny model's fp8 losses on the four paths equal those of the worker before it (ab/tiny, its
// `-this` runs) to the bit, the kernel check's three float8 products are byte for byte
// at::_scaled_mm's, and the search did keep plans for the float8 shapes it met.
TEST(RecordedModels, Fp8ProductsThroughTheSearchChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/block-fusions/";
  for (const std::string path : {"fused", "graph", "ckpt", "accum"}) {
    const auto mine = step_losses(dir + "fp8-plans/tiny-fp8-" + path + "-this.jsonl");
    ASSERT_EQ(mine.size(), 12u) << path;
    EXPECT_EQ(mine, step_losses(dir + "ab/tiny/tiny-fp8-" + path + "-this.jsonl")) << path;
  }
  const auto [rows, failed] =
      kernel_check_rows(dir + "fp8-plans/kernel-check.txt", std::regex(R"(^gemm fp8 7B w13\s.*\sok$)"));
  EXPECT_EQ(rows, 3) << "y, dx, dw fp32";
  EXPECT_EQ(failed, 0);
  std::ifstream searched(dir + "fp8-plans/llama3.2-1b-fp8-1.search.txt");
  ASSERT_TRUE(searched);
  int planned = 0;
  static const std::regex plan(R"(float8: at::_scaled_mm [\d.]+ us, chosen [\d.]+ us$)");
  for (std::string line; std::getline(searched, line);) planned += std::regex_search(line, plan);
  EXPECT_GE(planned, 10) << "the 1B's float8 shapes that kept a plan";
}

// The tied lookup's gradient as the batch's rows (fused::embedding_rows) changes no number: on
// the GPU the tiny shape tied, with accumulation, gave the losses of the commit before to the bit
// in bf16 and fp8 (the trainer finding the rows on the host), as did the eight untied pairs; the
// kernel check's tied gradient at Llama-3.2-1B's table was byte for byte the dense one; and the
// 1B runs held the peaks of the worker before, plus the lookup's indices.
TEST(RecordedModels, TiedLookupRowsChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/tied-lookup/ab/";
  expect_tiny_pairs_same(dir, {"fused", "graph", "ckpt", "accum", "tied"});
  const auto [rows, failed] = kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^embedding_rows\s.*\sok$)"));
  EXPECT_EQ(rows, 1) << "the tied gradient, tokens over the vocabulary and over 50";
  EXPECT_EQ(failed, 0);
  const auto runs = model_runs("models-h200/tied-lookup/ab");
  ASSERT_EQ(runs.size(), 8u) << "Llama-3.2-1B bf16 and fp8 x {this, against} x 2 rounds";
  // The lookup's distinct tokens and compact indices live through the step: 2,048 positions and
  // at most as many rows, int64, in one allocation (the caching allocator rounds it to 512 bytes).
  expect_peaks_of_pairs_equal(runs, 2 * 2048 * 8);
}

// Under amp fp8 the block's norms write the float8 inputs of wqkv and w13 (kernels::rms_norm_fp8,
// inside fp8_norm_qkv_rope and fp8_norm_swiglu_mlp): the same numbers as the norm's 16-bit output
// cast by its own kernel. Against the commit before: the tiny model's losses on every path, the
// kernel check's rows (norm and cast byte for byte, both nodes bit for bit, a width the norms'
// kernels do not take), and the peaks. The tiny runs also repeat those of tied-lookup/ab, an
// earlier call's, to the bit.
TEST(RecordedModels, NormsWritingFloat8ChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/norm-fp8/ab/";
  const std::vector<std::string> paths = {"fused", "graph", "ckpt", "accum", "tied"};
  expect_tiny_pairs_same(dir, paths);
  const std::string before = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/tied-lookup/ab/tiny/tiny-";
  for (const std::string amp : {"bf16", "fp8"})
    for (const auto& path : paths)
      EXPECT_EQ(step_losses(dir + "tiny/tiny-" + amp + "-" + path + "-this.jsonl"),
                step_losses(before + amp + "-" + path + "-this.jsonl"))
          << amp << " " << path;
  const auto norm = kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^rms_norm fp8 \d+x\d+.*\sok$)"));
  EXPECT_EQ(norm.first, 17) << "8 shapes x {values, scales} and the refused width";
  EXPECT_EQ(norm.second, 0);
  const auto nodes = kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^fp8 norm\+(mlp|qkv) .*\sok$)"));
  EXPECT_EQ(nodes.first, 22) << "6 feed-forward and 5 attention shapes x {values, scales}";
  // A width above the norms' kernels (8208): the composite path, where the kernel once claimed a
  // launch it did not make.
  EXPECT_EQ(kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^add_rms_norm 16x8208\s.*\sok$)")).first, 1);
  const auto runs = model_runs("models-h200/norm-fp8/ab");
  ASSERT_EQ(runs.size(), 12u) << "Llama-3.2-1B bf16 and fp8 x {this, against} x 3 rounds";
  expect_peaks_of_pairs_equal(runs);
  const auto seven = model_runs("models-h200/norm-fp8/ab-7b");
  ASSERT_EQ(seven.size(), 8u) << "the 7B in bf16 and fp8 x {this, against} x 2 rounds";
  expect_peaks_of_pairs_equal(seven);
  // After the review (review/): the launch's shared memory bounded by the device's limit, and more
  // shapes: three chunks a thread, a partly filled last chunk, bf16 streams. The tiny model's fp8
  // losses on four paths are still those above.
  const std::string review = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/norm-fp8/review/";
  const auto checked = kernel_check_rows(review + "kernel-check.txt", std::regex(R"(^rms_norm fp8 \d+x\d+.*\sok$)"));
  EXPECT_EQ(checked.first, 25) << "12 shapes x {values, scales} and the refused width";
  EXPECT_EQ(checked.second, 0);
  for (const std::string path : {"fused", "graph", "ckpt", "accum"})
    EXPECT_EQ(step_losses(review + "tiny/tiny-fp8-" + path + "-this.jsonl"),
              step_losses(dir + "tiny/tiny-fp8-" + path + "-this.jsonl"))
        << path;
}

// grad_dtype bf16 (grad-dtype/, README there): the AdamW kernel's update from bf16 gradients is, bit
// for bit, the update from their fp32 values; the tiny model trains the same with and without
// checkpointing, clips, and differs from fp32 gradients by their rounding only; the 7B's peak is 3
// GiB lower.
TEST(RecordedModels, Bf16WeightGradsKeepTheUpdateAndLowerThePeak) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/grad-dtype/";
  const auto adamw = kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^adamw bf16 gradients\s+p\s+0\.000e\+00\s.*\sok$)"));
  EXPECT_EQ(adamw.first, 1);
  EXPECT_EQ(adamw.second, 0);
  const auto bf16 = step_losses(dir + "tiny/tiny-grads-bf16.jsonl"), fp32 = step_losses(dir + "tiny/tiny-grads-fp32.jsonl");
  ASSERT_EQ(bf16.size(), 12u);
  EXPECT_EQ(bf16, step_losses(dir + "tiny/tiny-grads-bf16-ckpt.jsonl"));
  EXPECT_NE(bf16, fp32) << "the knob changed nothing: were the gradients really bf16?";
  for (size_t i = 0; i < bf16.size(); ++i) EXPECT_NEAR(bf16[i], fp32[i], 1e-4 * fp32[i]) << "step " << i;
  // A second call (second-call/): the same check and losses, three more rounds of the 7B.
  const std::string second = dir + "second-call/";
  EXPECT_EQ(kernel_check_rows(second + "kernel-check.txt", std::regex(R"(^adamw bf16 gradients\s+p\s+0\.000e\+00\s.*\sok$)"))
                .first,
            1);
  for (const std::string run : {"fp32", "bf16", "bf16-ckpt", "eager"})
    EXPECT_EQ(step_losses(second + "tiny/tiny-grads-" + run + ".jsonl"),
              step_losses(dir + "tiny/tiny-grads-" + run + ".jsonl"))
        << run;
  // A third call (clip/): the tiny runs again (the same losses) and with clipping at 0.5, where the
  // bf16 gradients' global norm clips them (their losses leave the unclipped ones) as fp32's does.
  const std::string clip = dir + "clip/";
  for (const std::string run : {"fp32", "bf16", "bf16-ckpt", "eager"})
    EXPECT_EQ(step_losses(clip + "tiny-grads-" + run + ".jsonl"), step_losses(dir + "tiny/tiny-grads-" + run + ".jsonl"))
        << run;
  const auto clipped = step_losses(clip + "tiny-grads-bf16-clip.jsonl"),
             clipped32 = step_losses(clip + "tiny-grads-fp32-clip.jsonl");
  ASSERT_EQ(clipped.size(), 12u);
  EXPECT_NE(clipped, bf16);
  for (size_t i = 0; i < clipped.size(); ++i) EXPECT_NEAR(clipped[i], clipped32[i], 1e-4 * clipped32[i]) << "step " << i;
  auto runs = model_runs("models-h200/grad-dtype");
  ASSERT_EQ(runs.size(), 8u) << "7b and llama3.2-1b x {bf16, fp32} x 2 rounds";
  for (auto& r : model_runs("models-h200/grad-dtype/second-call")) runs.push_back(std::move(r));
  ASSERT_EQ(runs.size(), 14u) << "and 7b x {bf16, fp32} x 3 rounds";
  for (const auto& r : runs) {
    EXPECT_EQ(r.config.grad_dtype == tunebench::config::DType::Bf16, r.name.find("-bf16-") != std::string::npos)
        << r.name;
    if (r.name.rfind("7b-grads-bf16", 0) != 0) continue;
    for (const auto& o : runs)
      if (o.name.rfind("7b-grads-fp32", 0) == 0)
        EXPECT_GT(o.peak_bytes - r.peak_bytes, int64_t{3} << 30) << r.name << " against " << o.name;
  }
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
