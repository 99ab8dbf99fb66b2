// The training loop on the CPU: learning, checkpointing and accumulation equivalences, bf16
// autocast, and the phase timeline's invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "core/engine/device.h"
#include "core/engine/errors.h"
#include "core/engine/model/llama.h"
#include "core/engine/optim/optimizer_overlap.h"
#include "core/engine/stats.h"
#include "core/engine/strategy/strategy.h"
#include "core/engine/trainer.h"
#include "core/metrics/percentile.h"
#include "engine_test_util.h"

namespace te = tunebench::engine;
namespace tc = tunebench::config;
using tunebench::protocol::Lane;
using tunebench::protocol::Phase;
using tunebench::protocol::Step;
using te::testing::small_config;

namespace {

te::DeviceContext cpu() { return te::DeviceContext::create(tc::Device::Cpu, 0); }

std::vector<at::Tensor> grads_of(te::Trainer& t) {
  std::vector<at::Tensor> g;
  for (const auto& p : t.model().parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
  return g;
}

std::vector<Step> run(const tc::TrialConfig& c, tunebench::protocol::Summary* summary = nullptr) {
  const auto device = cpu();
  te::testing::Events events;
  te::Trainer t(c, device, {}, [&](tunebench::protocol::Payload p) { events.all.push_back(std::move(p)); });
  const auto s = t.run();
  if (summary) *summary = s;
  return events.steps();
}

}  // namespace

TEST(Trainer, LearnsATokenFileWithStructure) {
  auto c = small_config();
  c.data = tc::DataSource::File;
  c.data_path = te::testing::write_pattern_file("learn", 20000, 13, 96);
  c.steps = 60;
  c.warmup = 1;
  c.lr = 3e-3;
  const auto steps = run(c);
  ASSERT_EQ(steps.size(), 60u);
  const double first = steps.front().loss;
  const double last = steps.back().loss;
  // Random init predicts ~uniform: ln(96) = 4.56. A period-13 pattern is fully predictable after
  // a few tokens; 60 AdamW steps must at least halve the loss.
  EXPECT_NEAR(first, std::log(96.0), 0.5);
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
}

TEST(Trainer, CheckpointedGradientsEqualPlainGradients) {
  const auto device = cpu();
  auto plain_cfg = small_config();
  auto ckpt_cfg = plain_cfg;
  ckpt_cfg.checkpointing = true;
  te::Trainer plain(plain_cfg, device, {}, [](auto) {});
  te::Trainer ckpt(ckpt_cfg, device, {}, [](auto) {});
  const at::Tensor tokens = te::testing::random_tokens(plain_cfg, 4, 11);
  const double l1 = plain.forward_backward(tokens);
  const double l2 = ckpt.forward_backward(tokens);
  EXPECT_DOUBLE_EQ(l1, l2);
  EXPECT_LT(te::testing::max_rel_diff(grads_of(ckpt), grads_of(plain)), 1e-6);
}

TEST(Trainer, AccumulatingKMicroBatchesEqualsOneBatchOfKTimesB) {
  const auto device = cpu();
  const auto c = small_config();
  te::Trainer accumulated(c, device, {}, [](auto) {});
  te::Trainer large(c, device, {}, [](auto) {});
  const at::Tensor batch = te::testing::random_tokens(c, 12, 3);  // k = 3 micro-batches of b = 4
  for (int i = 0; i < 3; ++i) accumulated.forward_backward(batch.narrow(0, 4 * i, 4), 3.0);
  large.forward_backward(batch, 1.0);
  EXPECT_LT(te::testing::max_rel_diff(grads_of(accumulated), grads_of(large)), 1e-5);
  // and one optimizer step on each leaves equal parameters. SGD: its update is linear in the
  // gradient (AdamW's first step is ~sign(g), which amplifies rounding on near-zero gradients).
  auto sgd = c;
  sgd.optimizer = tc::Optimizer::Sgd;
  sgd.lr = 0.1;
  std::vector<at::Tensor> micro = {batch.narrow(0, 0, 4), batch.narrow(0, 4, 4), batch.narrow(0, 8, 4)};
  te::Trainer a2(sgd, device, {}, [](auto) {});
  te::Trainer b2(sgd, device, {}, [](auto) {});
  const double la = a2.train_step(micro);
  const double lb = b2.train_step({batch});
  EXPECT_NEAR(la, lb, 1e-5);
  EXPECT_LT(te::testing::max_rel_diff(a2.model().parameters(), b2.model().parameters()), 1e-6);
}

// optimizer_overlap updates each unit inside the backward as its gradients complete. The update is
// the same, so parameters and losses must match the serial step exactly, and every unit must have
// been updated by the hooks (finish() updates the rest: without the count this could pass with
// hooks that never fire).
TEST(Trainer, OptimizerInBackwardGivesTheSameStepsAndUpdatesEveryUnitDuringTheBackward) {
  const auto device = cpu();
  struct Variant {
    const char* name;
    std::function<void(tc::TrialConfig&)> set;
  };
  const std::vector<Variant> variants = {
      {"adamw", [](tc::TrialConfig&) {}},
      {"sgd", [](tc::TrialConfig& c) { c.optimizer = tc::Optimizer::Sgd; }},
      {"accumulation 2", [](tc::TrialConfig& c) { c.grad_accum = 2; }},
      {"tied embeddings", [](tc::TrialConfig& c) { c.dims.tie_embeddings = true; }},
      {"checkpointing", [](tc::TrialConfig& c) { c.checkpointing = true; }},
      {"bf16 autocast", [](tc::TrialConfig& c) { c.amp = tc::Amp::Bf16; }},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    auto serial_cfg = small_config();
    serial_cfg.weight_decay = 0.01;
    v.set(serial_cfg);
    auto overlap_cfg = serial_cfg;
    overlap_cfg.optimizer_overlap = true;
    ASSERT_TRUE(tc::validate(overlap_cfg).empty());
    te::Trainer serial(serial_cfg, device, {}, [](auto) {});
    te::Trainer overlap(overlap_cfg, device, {}, [](auto) {});
    ASSERT_EQ(serial.optimizer_overlap(), nullptr);
    ASSERT_NE(overlap.optimizer_overlap(), nullptr);
    for (int step = 0; step < 3; ++step) {
      const at::Tensor batch = te::testing::random_tokens(serial_cfg, 4 * serial_cfg.grad_accum, 20 + step);
      std::vector<at::Tensor> micro;
      for (int64_t i = 0; i < serial_cfg.grad_accum; ++i) micro.push_back(batch.narrow(0, 4 * i, 4));
      EXPECT_EQ(serial.train_step(micro), overlap.train_step(micro)) << "step " << step;
      EXPECT_EQ(overlap.optimizer_overlap()->updated_in_backward(), overlap.model().unit_count()) << "step " << step;
    }
    EXPECT_EQ(te::testing::max_rel_diff(overlap.model().parameters(), serial.model().parameters()), 0.0);
    for (const auto& p : overlap.model().parameters()) EXPECT_FALSE(p.grad().defined());
  }
}

TEST(Trainer, Bf16AutocastRunsAndStaysCloseToFp32) {
  auto c = small_config();
  c.steps = 3;
  const auto fp32 = run(c);
  c.amp = tc::Amp::Bf16;
  const auto bf16 = run(c);
  ASSERT_EQ(bf16.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isfinite(bf16[i].loss));
    EXPECT_NEAR(bf16[i].loss, fp32[i].loss, 0.05) << "step " << i;
  }
  c.amp = tc::Amp::PureBf16;
  const auto pure = run(c);
  EXPECT_TRUE(std::isfinite(pure.back().loss));
}

TEST(Trainer, PhaseIntervalsLieInsideTheStepAndNeverOverlapOnALane) {
  auto c = small_config();
  c.checkpointing = true;
  c.grad_accum = 2;
  c.steps = 3;
  const auto steps = run(c);
  ASSERT_EQ(steps.size(), 3u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.tokens, c.micro_batch * c.seq_len * 2);
    std::map<Lane, std::vector<std::pair<int64_t, int64_t>>> lanes;
    std::map<Phase, int> count;
    for (const auto& in : s.intervals) {
      EXPECT_GE(in.start_us, s.start_us);
      EXPECT_LE(in.end_us, s.end_us);
      EXPECT_LE(in.start_us, in.end_us);
      EXPECT_EQ(in.lane, tunebench::protocol::default_lane(in.phase));
      lanes[in.lane].emplace_back(in.start_us, in.end_us);
      ++count[in.phase];
    }
    for (auto& [lane, v] : lanes) {
      std::sort(v.begin(), v.end());
      for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first) << "lane overlap";
    }
    EXPECT_EQ(count[Phase::DataWait], 2);
    EXPECT_EQ(count[Phase::HostToDevice], 2);
    EXPECT_EQ(count[Phase::Forward], 2);
    EXPECT_EQ(count[Phase::Recompute], 2 * c.dims.layers) << "one recompute per block per micro-step";
    EXPECT_GE(count[Phase::Backward], 2);
    EXPECT_EQ(count[Phase::Optimizer], 1);
  }
}

TEST(Trainer, LoaderThreadsRemoveTheDataWaitThePerSampleCostCreates) {
  // The per-sample cost is wall-clock work (spend_cpu runs to a deadline), the step is compute. The
  // step is made several times longer than a batch, so two loader threads, each building every
  // other batch, stay ahead of it on any machine: a loaded one only makes the step longer still.
  // What is compared is then not a race but the structure: inline, every batch is built while
  // the step waits; with threads, the batch was built before the step asked for it.
  auto c = small_config();
  c.dims = {256, 4, 4, 704, 96};
  c.seq_len = 128;
  c.sample_cpu_us = 2000;  // 8 ms of work per micro-batch of 4
  c.steps = 10;
  c.warmup = 3;
  tunebench::protocol::Summary inline_loader, threaded;
  run(c, &inline_loader);
  c.num_workers = 2;
  run(c, &threaded);
  // Without threads the batch is built on the training thread: the wait is the full cost.
  EXPECT_GE(inline_loader.data_wait_ms_median, 0.9 * 8.0);
  EXPECT_GT(inline_loader.step_ms_median, 2.0 * 8.0) << "the step must outlast a batch for the loaders to get ahead";
  // With two loader threads prefetching, the batch is ready before the step asks for it.
  EXPECT_LT(threaded.data_wait_ms_median, 0.25 * inline_loader.data_wait_ms_median)
      << "inline " << inline_loader.data_wait_ms_median << " ms, threaded " << threaded.data_wait_ms_median << " ms";
}

TEST(Trainer, SummaryExcludesWarmup) {
  auto c = small_config();
  c.steps = 5;
  c.warmup = 2;
  tunebench::protocol::Summary s;
  const auto steps = run(c, &s);
  EXPECT_EQ(s.measured_steps, 3);
  EXPECT_TRUE(steps[0].warmup);
  EXPECT_TRUE(steps[1].warmup);
  EXPECT_FALSE(steps[2].warmup);
  std::vector<double> measured = {steps[2].step_ms, steps[3].step_ms, steps[4].step_ms};
  EXPECT_DOUBLE_EQ(s.step_ms_median, tunebench::metrics::percentile(measured, 0.5));
  EXPECT_EQ(s.mfu, -1.0) << "no MFU without a known peak";
  EXPECT_GT(s.tokens_per_s, 0);
}

TEST(Trainer, UntimedRunRecordsNoIntervals) {
  auto c = small_config();
  c.steps = 2;
  c.timing = false;
  const auto steps = run(c);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_TRUE(steps[0].intervals.empty());
  EXPECT_GT(steps[0].step_ms, 0);
}

TEST(Trainer, UnsupportedRequestsFailBeforeTraining) {
  const auto device = cpu();
  auto c = small_config();
  c.amp = tc::Amp::Fp16;
  EXPECT_THROW(te::Trainer(c, device, {}, [](auto) {}), te::EngineError);
  c = small_config();
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  EXPECT_THROW(te::Trainer(c, device, {}, [](auto) {}), te::EngineError);
  if (!te::DeviceContext::cuda_built()) {
    EXPECT_THROW(te::DeviceContext::create(tc::Device::Cuda, 0), te::EngineError);
  }
}

TEST(Trainer, FusedOpsGiveTheCompositeModelsLossAndGradients) {
  // compile 'fused' on the CPU runs the fused ops' reference implementations: the model built
  // from them (norm + residual, rotary, SwiGLU, linear + cross-entropy) must be the same function
  // with the same gradients as the composite model, in fp32 and with checkpointing.
  const auto device = cpu();
  for (bool checkpointing : {false, true}) {
    auto plain_cfg = small_config();
    plain_cfg.checkpointing = checkpointing;
    auto fused_cfg = plain_cfg;
    fused_cfg.compile = tc::Compile::Fused;
    std::vector<tunebench::protocol::Payload> events;
    te::Trainer plain(plain_cfg, device, {}, [](auto) {});
    te::Trainer fused(fused_cfg, device, {}, [&](auto p) { events.push_back(std::move(p)); });
    const at::Tensor tokens = te::testing::random_tokens(plain_cfg, 4, 5);
    const double l1 = plain.forward_backward(tokens);
    const double l2 = fused.forward_backward(tokens);
    EXPECT_NEAR(l1, l2, 1e-5 * l1);
    EXPECT_LT(te::testing::max_rel_diff(grads_of(fused), grads_of(plain)), 1e-5);
    // and the worker says that the CPU gets no fused kernels
    ASSERT_FALSE(events.empty());
    const auto* w = std::get_if<tunebench::protocol::Warning>(&events.front());
    ASSERT_TRUE(w);
    EXPECT_EQ(w->kind, "compile");
    EXPECT_NE(w->message.find("no speed-up"), std::string::npos);
  }
}

TEST(Trainer, FusedOpsGiveTheCompositeModelsLossWithGroupedQueryAttentionAndTiedEmbeddings) {
  // Llama-3.2-1B's features at a small size: 4 query heads sharing 2 key/value heads, the output
  // head tied to the embedding, another rotary base. Both paths must be the same function.
  const auto device = cpu();
  auto plain_cfg = small_config();
  plain_cfg.dims.kv_heads = 2;
  plain_cfg.dims.tie_embeddings = true;
  plain_cfg.dims.rope_theta = 500000.0;
  auto fused_cfg = plain_cfg;
  fused_cfg.compile = tc::Compile::Fused;
  te::Trainer plain(plain_cfg, device, {}, [](auto) {});
  te::Trainer fused(fused_cfg, device, {}, [](auto) {});
  const at::Tensor tokens = te::testing::random_tokens(plain_cfg, 4, 7);
  const double l1 = plain.forward_backward(tokens);
  const double l2 = fused.forward_backward(tokens);
  EXPECT_NEAR(l1, l2, 1e-5 * l1);
  EXPECT_LT(te::testing::max_rel_diff(grads_of(fused), grads_of(plain)), 1e-5);
}

TEST(Trainer, TiedLookupRowsFoundOnTheHostChangeNoLossAndNoWeight) {
  // compile fused on one rank with a tied head: each step's batch gives the lookup its distinct
  // tokens from the host (Trainer::give_lookup_rows) and the table's gradient comes as those rows.
  // Against the same trainer with the dense lookup gradient: every loss and weight to the bit.
  const auto device = cpu();
  auto c = small_config();
  c.dims.tie_embeddings = true;
  c.compile = tc::Compile::Fused;
  c.steps = 3;
  c.grad_accum = 2;
  auto run_with = [&](bool sparse, std::vector<at::Tensor>* weights) {
    te::testing::Events events;
    te::Trainer t(c, device, {}, [&](tunebench::protocol::Payload p) { events.all.push_back(std::move(p)); });
    EXPECT_TRUE(t.model().kernels().sparse_embedding_grad) << "one rank, compile fused";
    te::ModelKernels k = t.model().kernels();
    k.sparse_embedding_grad = sparse;
    t.model().set_kernels(k);
    t.run();
    for (const auto& p : t.model().parameters()) weights->push_back(p.detach().clone());
    std::vector<double> losses;
    for (const auto& s : events.steps()) losses.push_back(s.loss);
    return losses;
  };
  std::vector<at::Tensor> rows_weights, dense_weights;
  const auto rows = run_with(true, &rows_weights);
  const auto dense = run_with(false, &dense_weights);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows, dense);
  EXPECT_EQ(te::testing::max_rel_diff(rows_weights, dense_weights), 0.0);
}

TEST(Trainer, FusedOpsInBf16StayCloseToBf16Autocast) {
  const auto device = cpu();
  auto plain_cfg = small_config();
  plain_cfg.amp = tc::Amp::Bf16;
  auto fused_cfg = plain_cfg;
  fused_cfg.compile = tc::Compile::Fused;
  te::Trainer plain(plain_cfg, device, {}, [](auto) {});
  te::Trainer fused(fused_cfg, device, {}, [](auto) {});
  const at::Tensor tokens = te::testing::random_tokens(plain_cfg, 4, 6);
  const double l1 = plain.forward_backward(tokens);
  const double l2 = fused.forward_backward(tokens);
  EXPECT_NEAR(l1, l2, 1e-2 * l1);  // both round to bf16, at different points
  EXPECT_LT(te::testing::max_rel_diff(grads_of(fused), grads_of(plain)), 5e-2);
}

TEST(Trainer, Fp8IsRefusedWithoutAHopperGpu) {
  auto c = small_config();
  c.amp = tc::Amp::Fp8;
  c.compile = tc::Compile::Fused;
  try {
    te::Trainer t(c, cpu(), {}, [](auto) {});
    FAIL() << "fp8 on the CPU must be refused";
  } catch (const te::EngineError& e) {
    EXPECT_EQ(e.kind(), "unsupported");
    EXPECT_NE(std::string(e.what()).find("fp8"), std::string::npos) << e.what();
  }
}
