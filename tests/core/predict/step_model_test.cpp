// The step-time model on synthetic links and knobs: the DDP bucket layout of the engine, the
// overlap model (exposed = what backward cannot hide, and never less than the last bucket), the
// nccl-tests floor, CUDA graphs removing the launch bound, and the data knobs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/predict/memory_model.h"
#include "core/predict/model_shape.h"
#include "core/predict/step_model.h"

namespace tc = tunebench::config;
namespace tp = tunebench::predict;
namespace hw = tunebench::hardware;

namespace {

// The step model's op of that name in a phase, or null.
const tp::OpCost* find_op(const tp::PhaseWork& w, const std::string& name) {
  for (const auto& o : w.ops)
    if (o.name == name) return &o;
  return nullptr;
}

// The 7B `compile fused` on one GPU under amp fp8.
tc::TrialConfig seven_b_fp8() {
  tc::TrialConfig c = *tc::trial_preset("7b-single-fused");
  c.amp = tc::Amp::Fp8;
  return c;
}
tp::StepWork work_of(const tc::TrialConfig& c) {
  return tp::step_work(c, tp::precision_of(c), tp::execution_mode(c, true));
}

tc::TrialConfig seven_b_ddp() {
  tc::TrialConfig c = *tc::trial_preset("7b-ddp");
  c.checkpointing = false;
  return c;
}

tp::LinkCurve flat(double busbw_gbps) {
  tp::LinkCurve l;
  l.busbw_gbps = busbw_gbps;
  l.alpha_us = 0;
  l.nccl_channels = 0;
  return l;
}

tp::StepEstimate estimate(const tc::TrialConfig& c, const tp::LinkCurve* link = nullptr, double contention = 0) {
  tp::StepInputs in;
  in.config = &c;
  in.gpu = hw::find_gpu("h200");
  in.link = link;
  in.efficiency = tp::default_efficiency();
  in.contention = contention;
  const auto s = tp::estimate_step(in);
  EXPECT_TRUE(s.has_value());
  return s.value_or(tp::StepEstimate{});
}

}  // namespace

TEST(StepModel, DdpBucketsFollowTheEngineLayout) {
  const auto c = seven_b_ddp();
  const auto buckets = tp::ddp_bucket_numels(c, 4);
  const double total = std::accumulate(buckets.begin(), buckets.end(), 0.0);
  EXPECT_DOUBLE_EQ(total, static_cast<double>(tp::parameter_count(c.dims)));
  // Reverse parameter order: the head's output matrix first (larger than the 1 MiB first cap, so
  // alone), then the final norm, which the next parameter (block 31's w2) does not fit beside.
  EXPECT_DOUBLE_EQ(buckets[0], 4096.0 * 32000);
  EXPECT_DOUBLE_EQ(buckets[1], 4096.0);
  // The last holds the embedding table, the last gradient of backward.
  EXPECT_DOUBLE_EQ(buckets.back(), 4096.0 * 32000);
  // A bucket exceeds the 25 MiB cap only when one parameter does (w13: 2 x 11008 x 4096).
  for (size_t b = 1; b + 1 < buckets.size(); ++b)
    EXPECT_LE(buckets[b], std::max(25.0 * 1024 * 1024 / 4, 2.0 * 11008 * 4096)) << b;
}

TEST(StepModel, CommunicationFloorIsGradientBytesOverBusBandwidth) {
  const auto c = seven_b_ddp();
  const auto link = flat(100.0);
  const auto s = estimate(c, &link);
  // two ranks: every fp32 gradient byte crosses the bus once (2(n-1)/n = 1)
  EXPECT_NEAR(s.comm_floor_ms, 4.0 * tp::parameter_count(c.dims) / 100e9 * 1e3, 1e-6);
}

TEST(StepModel, BackwardHidesTheAllReduceButNotTheLastBucket) {
  const auto c = seven_b_ddp();
  const auto fast = flat(1000.0);
  const auto s = estimate(c, &fast);
  ASSERT_LT(s.comm_floor_ms, s.backward_ms);
  const double last_bucket_ms = 4.0 * 4096 * 32000 / 1000e9 * 1e3;
  EXPECT_NEAR(s.exposed_comm_ms, last_bucket_ms, 1e-9);

  const auto slow = flat(5.0);
  const auto t = estimate(c, &slow);
  ASSERT_GT(t.comm_floor_ms, t.backward_ms);
  EXPECT_NEAR(t.exposed_comm_ms, t.comm_floor_ms - t.backward_ms, 1e-9);

  auto no_overlap = c;
  no_overlap.ddp_overlap = false;
  EXPECT_NEAR(estimate(no_overlap, &fast).exposed_comm_ms, s.comm_floor_ms, 1e-9);
}

TEST(StepModel, ContentionSlowsComputeByTheHiddenCommunication) {
  const auto c = seven_b_ddp();
  const auto link = flat(300.0);
  const auto none = estimate(c, &link, 0.0);
  const auto some = estimate(c, &link, 0.25);
  EXPECT_NEAR(some.contention_ms, 0.25 * (none.comm_floor_ms - none.exposed_comm_ms), 1e-9);
  EXPECT_NEAR(some.step_ms - none.step_ms, some.contention_ms, 1e-9);
}

TEST(StepModel, AccumulationPaysTheAllReduceOncePerStep) {
  auto c = seven_b_ddp();
  const auto link = flat(20.0);
  const auto one = estimate(c, &link);
  c.grad_accum = 4;
  const auto four = estimate(c, &link);
  EXPECT_NEAR(four.comm_floor_ms, one.comm_floor_ms, 1e-9);
  EXPECT_NEAR(four.forward_ms, 4 * one.forward_ms, 1e-6);
  EXPECT_GT(four.tokens_per_s_per_gpu, 1.5 * one.tokens_per_s_per_gpu);  // the floor is amortised
}

TEST(StepModel, CudaGraphRemovesTheLaunchBoundOfSmallKernels) {
  tc::TrialConfig c;  // the tiny model: thousands of microsecond kernels
  c.device = tc::Device::Cuda;
  c.amp = tc::Amp::Bf16;
  c.micro_batch = 1;
  c.seq_len = 64;
  const auto eager = estimate(c);
  c.compile = tc::Compile::Graph;
  const auto graph = estimate(c);
  EXPECT_LT(graph.forward_ms, 0.5 * eager.forward_ms);
}

TEST(StepModel, DataWaitFollowsTheLoaderKnobs) {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  c.model = "125m";
  c.dims = *tc::model_preset("125m");
  c.micro_batch = 8;
  c.seq_len = 1024;
  c.sample_cpu_us = 1500;
  c.num_workers = 0;
  // 8 samples x 1.5 ms on the training thread while the GPU waits (measured: 12.4 ms, BENCHMARKS.md)
  EXPECT_NEAR(estimate(c).data_wait_ms, 12.0, 1e-9);
  c.num_workers = 4;
  EXPECT_EQ(estimate(c).data_wait_ms, 0.0);  // 3 ms per batch from 4 threads, less than a step's compute
}

TEST(StepModel, UnknownPrecisionPeakIsNoPrediction) {
  tc::TrialConfig c = *tc::trial_preset("7b-single");  // bf16
  tp::StepInputs in;
  in.config = &c;
  in.gpu = hw::find_gpu("v100");  // no bf16 tensor cores
  in.efficiency = tp::default_efficiency();
  EXPECT_FALSE(tp::estimate_step(in).has_value());
}

// optimizer_overlap moves the update into the backward's interval: the step as measured on an H200
// (unchanged), the optimizer phase what was left after the backward.
TEST(StepModel, OptimizerInBackwardMovesTheUpdateIntoTheBackward) {
  auto c = *tc::trial_preset("7b-single");
  c.compile = tc::Compile::Fused;
  const auto serial = estimate(c);
  c.optimizer_overlap = true;
  const auto overlapped = estimate(c);
  ASSERT_GT(serial.optimizer_ms, 10.0);
  EXPECT_NEAR(overlapped.step_ms, serial.step_ms, 1e-6 * serial.step_ms);
  EXPECT_LT(overlapped.optimizer_ms, 0.05 * serial.optimizer_ms);
  EXPECT_NEAR(overlapped.backward_ms - serial.backward_ms, serial.optimizer_ms - overlapped.optimizer_ms, 1e-6);
  EXPECT_DOUBLE_EQ(overlapped.forward_ms, serial.forward_ms);
}

// amp fp8 with compile fused on one GPU: AdamW writes the blocks' float8 weights (both layouts) and
// the head's bf16 copy in its pass, so the forward casts no weight; under DDP (no copies) the
// forward still reads every fp32 block weight and writes its two float8 casts.
TEST(StepModel, Fp8WeightsWrittenByAdamWReplaceTheForwardsCasts) {
  tc::TrialConfig c = *tc::trial_preset("7b-single-fused");
  c.amp = tc::Amp::Fp8;
  const auto named = [](const tp::PhaseWork& w, const std::string& prefix) {
    double bytes = -1;
    for (const auto& op : w.ops)
      if (op.name.rfind(prefix, 0) == 0) bytes = std::max(bytes, 0.0) + op.bytes;
    return bytes;  // -1: no such op
  };
  const auto work = tp::step_work(c, tp::precision_of(c), tp::execution_mode(c, true));
  EXPECT_EQ(named(work.forward, "weight casts"), -1.0);
  const auto units = tp::llama_units(c.dims);
  const double numel = static_cast<double>(tp::parameter_count(c.dims));
  const double head = static_cast<double>(c.dims.vocab) * static_cast<double>(c.dims.dim);
  EXPECT_DOUBLE_EQ(named(work.optimizer, "AdamW's weights for the next forward"), (numel - head) * 2);

  tc::TrialConfig ddp = c;
  ddp.strategy = tc::Strategy::Ddp;
  ddp.world_size = 2;
  const auto dwork = tp::step_work(ddp, tp::precision_of(ddp), tp::execution_mode(ddp, true));
  const double block_matmul = static_cast<double>(units[1].matmul_numel());
  // fp32 read (4 bytes), the float8 weight and its transpose (2), per block weight; the head's
  // 16-bit cast (4 + 2) beside them.
  EXPECT_DOUBLE_EQ(named(dwork.forward, "weight casts"), c.dims.layers * block_matmul * 6 + head * 6);
  EXPECT_EQ(named(dwork.optimizer, "AdamW's weights for the next forward"), -1.0);

  tp::MemoryOptions options;
  options.device_memory_bytes = int64_t{150109880320};
  EXPECT_TRUE(tp::predict_memory(c, options).weight_copies);
  EXPECT_FALSE(tp::predict_memory(ddp, options).weight_copies);
}

// Under amp fp8 the fused norms write wqkv's and w13's float8 inputs (kernels::rms_norm_fp8): no
// input casts of their own, and each norm writes float8 twice instead of its 16-bit output; wo's
// input (attention's output) keeps its cast. Widths above 8192, and eager blocks, keep the casts.
TEST(StepModel, Fp8NormsWriteTheProjectionsFloat8Inputs) {
  const tc::TrialConfig c = seven_b_fp8();
  const auto work = work_of(c);
  const auto op = find_op;
  EXPECT_EQ(op(work.forward, "block wqkv input cast to float8"), nullptr);
  EXPECT_EQ(op(work.forward, "block w13 input cast to float8"), nullptr);
  ASSERT_NE(op(work.forward, "block wo input cast to float8"), nullptr);
  const double t = static_cast<double>(c.seq_len * c.micro_batch), L = c.dims.layers, D = c.dims.dim;
  // rms_norm reads the fp32 stream; add_rms_norm reads it and attention's bf16 output and writes h;
  // each writes float8 twice and one rstd (4 bytes) per token.
  ASSERT_NE(op(work.forward, "block norms"), nullptr);
  EXPECT_DOUBLE_EQ(op(work.forward, "block norms")->bytes, L * t * ((4 + 2) * D + 4 + (2 * 4 + 2 + 2) * D));

  tc::TrialConfig bf16 = c;  // bf16: the 16-bit outputs the linears read
  bf16.amp = tc::Amp::Bf16;
  EXPECT_DOUBLE_EQ(op(work_of(bf16).forward, "block norms")->bytes, L * t * ((4 + 2) * D + 4 + (2 * 4 + 2 * 2) * D));

  tc::TrialConfig wide = c;  // 8208 wide: the norm's float8 kernel does not take it
  wide.dims.dim = 8208;
  wide.dims.heads = 57;
  wide.dims.kv_heads = 57;
  const auto wwork = work_of(wide);
  EXPECT_NE(op(wwork.forward, "block wqkv input cast to float8"), nullptr);
  EXPECT_NE(op(wwork.forward, "block w13 input cast to float8"), nullptr);
}

// Under amp fp8 the SwiGLU kernels write w2's float8 input and w13's float8 output gradient
// (kernels/fp8_linear.h, fp8_norm_swiglu_mlp): no cast kernels of their own; w2's output gradient is
// cast from the fp32 residual gradient; the other linears keep theirs, each the size of what it
// casts (the output gradient is tokens x the linear's outputs).
TEST(StepModel, Fp8SwigluWritesTheFeedForwardsCasts) {
  const tc::TrialConfig c = seven_b_fp8();
  const auto work = work_of(c);
  const auto op = find_op;
  EXPECT_EQ(op(work.forward, "block w2 input cast to float8"), nullptr);
  EXPECT_EQ(op(work.backward, "block w13 gradient cast to float8"), nullptr);
  const double t = static_cast<double>(c.seq_len * c.micro_batch), L = c.dims.layers, D = c.dims.dim, F = c.dims.ffn;
  const auto* w2_grad = op(work.backward, "block w2 gradient cast to float8");
  ASSERT_NE(w2_grad, nullptr);
  EXPECT_DOUBLE_EQ(w2_grad->bytes, L * t * D * (4 + 2));  // reads fp32, writes e5m2 twice
  // The rotary backward writes wqkv's (head size 128, a multiple of 16): reads dq, dk, dv.
  EXPECT_EQ(op(work.backward, "block wqkv gradient cast to float8"), nullptr);
  ASSERT_NE(op(work.backward, "block rotary backward"), nullptr);
  EXPECT_DOUBLE_EQ(op(work.backward, "block rotary backward")->bytes, L * t * (D + 2 * c.dims.kv_dim()) * 4);
  const auto* wo_grad = op(work.backward, "block wo gradient cast to float8");
  ASSERT_NE(wo_grad, nullptr);
  EXPECT_DOUBLE_EQ(wo_grad->bytes, L * t * D * 4);  // reads bf16, writes e5m2 twice
  tc::TrialConfig hd100 = c;                        // head size 100: the rotation's float8 kernel does not take it
  hd100.dims.dim = 3200;
  hd100.dims.heads = 32;
  const auto w100 = tp::step_work(hd100, tp::precision_of(hd100), tp::execution_mode(hd100, true));
  EXPECT_NE(op(w100.backward, "block wqkv gradient cast to float8"), nullptr);
  // SwiGLU: forward reads gate and up, writes float8 twice; backward reads gate, up and the output
  // gradient and writes the float8 gradient twice.
  ASSERT_NE(op(work.forward, "block swiglu"), nullptr);
  EXPECT_DOUBLE_EQ(op(work.forward, "block swiglu")->bytes, L * t * (4 * F + 2 * F));
  ASSERT_NE(op(work.backward, "block swiglu backward"), nullptr);
  EXPECT_DOUBLE_EQ(op(work.backward, "block swiglu backward")->bytes, L * t * (6 * F + 4 * F));

  tc::TrialConfig bf16 = c;  // bf16 keeps the 16-bit product
  bf16.amp = tc::Amp::Bf16;
  const auto bwork = tp::step_work(bf16, tp::precision_of(bf16), tp::execution_mode(bf16, true));
  EXPECT_DOUBLE_EQ(op(bwork.forward, "block swiglu")->bytes, L * t * 6 * F);
  EXPECT_DOUBLE_EQ(op(bwork.backward, "block swiglu backward")->bytes, L * t * 12 * F);
}

// The fused loss scales the head's fp32 weight gradient in place by the loss gradient, and skips it
// when that is 1: only accumulation (the loss divided over micro-steps) and fp16's loss scale pay
// the pass over the vocabulary x dim gradient; a 16-bit head weight pays it every step.
TEST(StepModel, HeadGradientIsScaledOnlyWhenTheLossGradientIsNotOne) {
  tc::TrialConfig c = *tc::trial_preset("7b-single-fused");
  const auto head_bytes = [](const tc::TrialConfig& x) {
    const auto w = tp::step_work(x, tp::precision_of(x), tp::execution_mode(x, true));
    const auto* o = find_op(w.backward, "output head gradients scaled");
    return o ? o->bytes : -1.0;
  };
  const double t = static_cast<double>(c.seq_len * c.micro_batch), D = c.dims.dim, V = c.dims.vocab;
  const auto p = tp::precision_of(c);
  EXPECT_DOUBLE_EQ(head_bytes(c), t * D * (p.compute_bytes + p.residual_bytes));
  tc::TrialConfig accum = c;
  accum.grad_accum = 2;
  EXPECT_DOUBLE_EQ(head_bytes(accum), t * D * (p.compute_bytes + p.residual_bytes) + V * D * 8);
  tc::TrialConfig fp16 = c;
  fp16.amp = tc::Amp::Fp16;
  const auto p16 = tp::precision_of(fp16);
  EXPECT_DOUBLE_EQ(head_bytes(fp16), t * D * (p16.compute_bytes + p16.residual_bytes) + V * D * 8);
  // A 16-bit head weight (pure bf16) takes the product into a new 16-bit tensor every step.
  tc::TrialConfig pure = c;
  pure.amp = tc::Amp::PureBf16;
  const auto pp = tp::precision_of(pure);
  ASSERT_EQ(pp.param_bytes, 2);
  EXPECT_DOUBLE_EQ(head_bytes(pure), t * D * (pp.compute_bytes + pp.residual_bytes) + V * D * 4);
}

// grad_dtype bf16 (predict::half_weight_grads): AdamW reads the blocks' matmul weights' gradients
// in bf16, 2 bytes a parameter less than the 28 (fp32 p, g, m, v read; p, m, v written) of the rest.
TEST(StepModel, Bf16WeightGradsReadTwoBytesLessPerBlockWeight) {
  tc::TrialConfig c = *tc::trial_preset("7b-single-fused");
  c.grad_dtype = tc::DType::Bf16;
  const auto mode = tp::execution_mode(c, true);
  ASSERT_TRUE(mode.half_weight_grads);
  const auto* adamw = find_op(work_of(c).optimizer, "AdamW (fused)");
  ASSERT_NE(adamw, nullptr);
  const auto units = tp::llama_units(c.dims);
  const double numel = static_cast<double>(tp::parameter_count(c.dims));
  const double block_matmul = static_cast<double>(units[1].matmul_numel()) * c.dims.layers;
  EXPECT_DOUBLE_EQ(adamw->bytes, numel * 28 - block_matmul * 2);
  tc::TrialConfig fp32 = c;
  fp32.grad_dtype = tc::DType::Fp32;
  EXPECT_FALSE(tp::execution_mode(fp32, true).half_weight_grads);
  EXPECT_DOUBLE_EQ(find_op(work_of(fp32).optimizer, "AdamW (fused)")->bytes, numel * 28);
}
