// Checks of the evidence, not of the product: the recorded GPU calls behind the claims "this change
// of the worker changes no number" (docs/history/benchmarks-2026-12.md, sessions 9 to 13). Each
// compares recordings of one call with each other (the losses of two workers, the peaks of twin runs,
// the rows of the kernel check's output); the product is asked only to read the logs. They say that
// the recordings still show what the history claims. ctest label `evidence` (`ctest -L evidence`).
// The kernels themselves are checked on the GPU by tunebench-kernel-check (tests/gpu) and on the CPU
// by tests/core/engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"
#include "tests/core/predict/model_runs.h"

using tunebench::test_data::ModelRun;
using tunebench::test_data::model_runs;
using tunebench::test_data::runs_in;

namespace {

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
  int pairs = 0;
  for (const auto& r : rows) {
    const auto at = r.name.find("-this-");
    if (at == std::string::npos) continue;
    const std::string other = r.name.substr(0, at) + "-against-" + r.name.substr(at + 6);
    const auto match = std::find_if(rows.begin(), rows.end(), [&](const ModelRun& o) { return o.name == other; });
    ASSERT_NE(match, rows.end()) << other;
    EXPECT_GE(r.peak_bytes, match->peak_bytes) << r.name;
    EXPECT_LE(r.peak_bytes, match->peak_bytes + more) << r.name;
    ++pairs;
  }
  EXPECT_GT(pairs, 0) << "no -this- run beside its -against- twin";
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

// The GEMM algorithm search changes speed only (core/engine/kernels/gemm_search.h). Each row's runs
// with the search hold the same peak as those with cuBLAS's pick: the search's scratch is between
// steps and not charged. The tiny model in bf16 and fp8, with the search, without it and with it
// again, computes the same loss, to the last bit printed, at every step; its logs say the search
// measured shapes (a run whose GEMMs were never searched would prove nothing).
TEST(Evidence, GemmSearchLeavesThePeakAndTheLossesAsTheyWere) {
  const auto all = runs_in({"models-h200/gemm-search/between-steps", "models-h200/gemm-search/7b-six-rounds"});
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
  EXPECT_GT(pairs, 0) << "no run with the search beside its cublas twin";

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
TEST(Evidence, BlockFusionsChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/block-fusions/ab/";
  expect_tiny_pairs_same(dir, {"fused", "graph", "ckpt", "accum"});

  const auto rows = model_runs("models-h200/block-fusions/ab");
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
TEST(Evidence, Fp8ProductsThroughTheSearchChangeNoNumber) {
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
TEST(Evidence, TiedLookupRowsChangeNoNumber) {
  const std::string dir = std::string(TUNEBENCH_TEST_DATA_DIR) + "/models-h200/tied-lookup/ab/";
  expect_tiny_pairs_same(dir, {"fused", "graph", "ckpt", "accum", "tied"});
  const auto [rows, failed] = kernel_check_rows(dir + "kernel-check.txt", std::regex(R"(^embedding_rows\s.*\sok$)"));
  EXPECT_EQ(rows, 1) << "the tied gradient, tokens over the vocabulary and over 50";
  EXPECT_EQ(failed, 0);
  const auto runs = model_runs("models-h200/tied-lookup/ab");
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
TEST(Evidence, NormsWritingFloat8ChangeNoNumber) {
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
  expect_peaks_of_pairs_equal(runs);
  const auto seven = model_runs("models-h200/norm-fp8/ab-7b");
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
TEST(Evidence, Bf16WeightGradsKeepTheUpdateAndLowerThePeak) {
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
  const auto runs = runs_in({"models-h200/grad-dtype", "models-h200/grad-dtype/second-call"});
  int pairs = 0;
  for (const auto& r : runs) {
    EXPECT_EQ(r.config.grad_dtype == tunebench::config::DType::Bf16, r.name.find("-bf16-") != std::string::npos)
        << r.name;
    if (r.name.rfind("7b-grads-bf16", 0) != 0) continue;
    for (const auto& o : runs)
      if (o.name.rfind("7b-grads-fp32", 0) == 0) {
        EXPECT_GT(o.peak_bytes - r.peak_bytes, int64_t{3} << 30) << r.name << " against " << o.name;
        ++pairs;
      }
  }
  EXPECT_GT(pairs, 0) << "no 7B run with bf16 gradients beside one with fp32";
}
