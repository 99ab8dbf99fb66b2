#include "core/predict/step_model.h"

#include <algorithm>
#include <cmath>

#include "core/metrics/data_parallel_bounds.h"
#include "core/metrics/flops.h"
#include "core/predict/model_shape.h"
#include "core/predict/precision.h"

namespace tunebench::predict {

namespace {

using protocol::Phase;

// optimizer_overlap, measured on an H200 with the 7B in `compile fused`
// (docs/history/benchmarks-2026-12.md, "Optimizer in backward"): the update's kernels run between
// the backward's, not beside them, so the step keeps its length and the update's time moves from the
// optimizer phase into the backward's interval (all of it on the CPU, where the updates run inside
// the backward's hooks).
constexpr double kOverlapMovedGpu = 0.985;  // share of the update inside the backward's interval
constexpr double kOverlapSaved = 0.0;       // share of the update's time the step saves

double op_ms(const OpCost& op, const DeviceRates& rates, double matmul_eff, const Efficiency& eff) {
  const double memory_ms = op.bytes / (rates.hbm_gbps * 1e9 * eff.memory) * 1e3;
  if (op.kind == OpKind::Memory) return memory_ms;
  // A GEMM runs at the calibrated efficiency of a large one times its shape's factor; attention at
  // the calibrated ratio of cuDNN's head-128 speed, times its kernel's measured speed at the head
  // size and grouping against that.
  const hardware::Catalogue& cat = eff.catalogue ? *eff.catalogue : hardware::catalogue();
  const double e = op.kind == OpKind::Attention
                       ? matmul_eff * eff.attention_ratio * attention_speed(op.attention, op.head_dim, op.grouped, cat)
                       : matmul_eff * gemm_shape_factor(op.gemm, rates.sms, cat);
  const double peak = op.fp8 && rates.fp8_tflops > 0 ? rates.fp8_tflops : rates.matmul_tflops;
  const double compute_ms = op.flops / (peak * 1e12 * e) * 1e3;
  return std::max(compute_ms, memory_ms);
}

// The collectives of one step and how much of them compute can hide.
struct CommEstimate {
  double floor_ms = 0;
  double exposed_ms = 0;
  double smallest_message_bytes = 0;
};

CommEstimate ddp_comm(const config::TrialConfig& c, const Precision& p, const LinkCurve& link, double overlappable_ms) {
  CommEstimate e;
  const int n = c.world_size;
  const auto buckets = ddp_bucket_numels(c, p.param_bytes);
  double last = 0;
  for (double numel : buckets) {
    const double bytes = numel * p.wire_bytes;
    last = link.collective_ms(Phase::AllReduce, bytes, n);
    e.floor_ms += last;
    e.smallest_message_bytes = e.smallest_message_bytes == 0 ? bytes : std::min(e.smallest_message_bytes, bytes);
  }
  // The last bucket holds the embedding table, whose gradient arrives as backward ends: it cannot
  // hide. Everything before it hides behind backward up to the backward's length.
  e.exposed_ms =
      c.ddp_overlap ? std::max(metrics::exposed_comm_lower_bound_ms(e.floor_ms, overlappable_ms), last) : e.floor_ms;
  return e;
}

CommEstimate fsdp_comm(const config::TrialConfig& c, const Precision& p, const LinkCurve& link, double forward_ms,
                       double backward_ms) {
  CommEstimate e;
  const int n = c.world_size;
  const auto units = llama_units(c.dims);
  const bool full_shard = c.fsdp_mode == config::FsdpMode::FullShard;
  double gather_fwd = 0, gather_bwd = 0, reduce = 0, first_gather = 0, last_reduce = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    const double padded = static_cast<double>((units[u].numel() + n - 1) / n) * n;
    const double g = link.collective_ms(Phase::AllGather, padded * p.gathered_bytes, n);
    const double r = link.collective_ms(Phase::ReduceScatter, padded * p.reduce_bytes, n);
    gather_fwd += g;
    if (full_shard && u + 1 < units.size()) gather_bwd += g;  // the head stays gathered
    reduce += r;
    if (u == 0) {
      first_gather = g;
      last_reduce = r;  // the embedding's gradients are reduced last
    }
  }
  const double micro = static_cast<double>(c.grad_accum);
  e.floor_ms = micro * (gather_fwd + gather_bwd + reduce);
  // Forward: the first unit's gather waits at the step start; the rest are prefetched behind compute.
  const double fwd_exposed = c.fsdp_prefetch
                                 ? std::max(metrics::exposed_comm_lower_bound_ms(gather_fwd, forward_ms), first_gather)
                                 : gather_fwd;
  // Backward: re-gathers (prefetched) and reduce-scatters hide behind backward; the embedding's
  // reduce-scatter comes after it.
  const double bwd_hideable = c.fsdp_prefetch ? gather_bwd + reduce : reduce;
  const double bwd_exposed = std::max(metrics::exposed_comm_lower_bound_ms(bwd_hideable, backward_ms), last_reduce) +
                             (c.fsdp_prefetch ? 0.0 : gather_bwd);
  e.exposed_ms = micro * (fwd_exposed + bwd_exposed);
  e.smallest_message_bytes = 0;
  return e;
}

}  // namespace

Efficiency default_efficiency(const hardware::Catalogue& cat) {
  Efficiency e;
  e.matmul_forward = cat.constant("matmul_efficiency");
  e.matmul_backward = e.matmul_forward;
  e.attention_ratio = cat.constant("attention_efficiency") / e.matmul_forward;
  e.memory = cat.constant("memory_efficiency");
  e.launch_us = cat.constant("kernel_launch_us");
  e.source = "catalogue defaults (" + cat.origin + ")";
  e.catalogue = &cat;
  return e;
}

std::optional<DeviceRates> device_rates(const hardware::GpuSpec& gpu, const config::TrialConfig& c) {
  const Precision p = precision_of(c);
  const auto peak = hardware::peak_tflops(gpu, p.matmul_dtype);
  if (!peak || *peak <= 0) return std::nullopt;
  double fp8 = 0;
  if (p.fp8) {
    const auto f = hardware::peak_tflops(gpu, "fp8");
    if (!f) return std::nullopt;  // amp fp8 on a GPU without float8 tensor cores
    fp8 = *f;
  }
  return DeviceRates{*peak, fp8, gpu.hbm_gbps, gpu.sms};
}

double phase_ms(const PhaseWork& work, const DeviceRates& rates, double matmul_eff, const Efficiency& eff,
                bool cuda_graph) {
  double device = 0;
  for (const auto& op : work.ops) device += op_ms(op, rates, matmul_eff, eff);
  const double host = cuda_graph ? 0.0 : work.kernels() * eff.launch_us / 1e3;
  return std::max(device, host);
}

double default_contention(const LinkCurve& link, const hardware::GpuSpec& gpu) {
  if (gpu.sms <= 0) return 0;
  return std::min(1.0, static_cast<double>(link.nccl_channels) / gpu.sms);
}

std::vector<double> ddp_bucket_numels(const config::TrialConfig& c, int param_bytes) {
  std::vector<double> params;
  for (const auto& u : llama_units(c.dims))
    for (const auto& p : u.params) params.push_back(static_cast<double>(p.numel()));
  const double first_cap = std::floor(c.first_bucket_mb * 1024 * 1024 / param_bytes);
  const double cap = std::floor(c.bucket_mb * 1024 * 1024 / param_bytes);
  std::vector<double> buckets(1, 0.0);
  for (size_t k = params.size(); k-- > 0;) {
    const double limit = buckets.size() == 1 ? first_cap : cap;
    if (buckets.back() > 0 && buckets.back() + params[k] > limit) buckets.push_back(0.0);
    buckets.back() += params[k];
  }
  return buckets;
}

std::optional<StepEstimate> estimate_step(const StepInputs& in) {
  if (!in.config || !in.gpu) return std::nullopt;
  const config::TrialConfig& c = *in.config;
  const auto rates = device_rates(*in.gpu, c);
  if (!rates) return std::nullopt;
  const int n = std::max(1, c.world_size);
  if (n > 1 && !in.link) return std::nullopt;
  const Precision p = precision_of(c);
  const ExecutionMode mode = execution_mode(c, in.cuda);
  const StepWork work = step_work(c, p, mode);
  const Efficiency& eff = in.efficiency;
  const double accum = static_cast<double>(std::max<int64_t>(1, c.grad_accum));

  StepEstimate s;
  const double fwd = phase_ms(work.forward, *rates, eff.matmul_forward, eff, mode.cuda_graph);
  const double bwd = phase_ms(work.backward, *rates, eff.matmul_backward, eff, mode.cuda_graph);
  const double rec = c.checkpointing ? phase_ms(work.recompute, *rates, eff.matmul_forward, eff, mode.cuda_graph) : 0.0;
  s.forward_ms = accum * fwd;
  s.recompute_ms = accum * rec;
  s.backward_ms = accum * (bwd + rec);
  s.optimizer_ms = phase_ms(work.optimizer, *rates, eff.matmul_forward, eff, mode.cuda_graph);
  if (c.optimizer_overlap) {
    const double update = s.optimizer_ms, moved = in.cuda ? kOverlapMovedGpu : 1.0;
    s.optimizer_ms = update * (1.0 - moved);
    s.backward_ms += update * (moved - kOverlapSaved);
  }

  // Data: with no loader threads every micro-batch's CPU work runs on the training thread; the
  // first one while the GPU idles (the step starts after a synchronisation), later ones while the
  // GPU still runs the previous micro-step. Loader threads produce batches in parallel.
  const double load_ms = static_cast<double>(c.micro_batch) * c.sample_cpu_us / 1e3;
  const double micro_compute = fwd + bwd + rec;
  if (c.num_workers == 0)
    s.data_wait_ms = load_ms + (accum - 1) * std::max(0.0, load_ms - micro_compute);
  else
    s.data_wait_ms = accum * std::max(0.0, load_ms / c.num_workers - micro_compute);
  // Host-to-device: int64 tokens; a pageable copy blocks the host (about 10 GB/s), a pinned one not.
  const double token_bytes = static_cast<double>(c.micro_batch * (c.seq_len + 1)) * 8;
  s.h2d_ms = in.cuda ? accum * (0.01 + (c.pin_memory ? 0.0 : token_bytes / 10e9 * 1e3)) : 0.0;

  // Communication.
  if (n > 1) {
    CommEstimate comm;
    if (c.strategy == config::Strategy::Ddp) {
      comm = ddp_comm(c, p, *in.link, bwd + rec);
      s.first_bucket_bytes = comm.smallest_message_bytes;
    } else if (c.strategy == config::Strategy::Fsdp) {
      comm = fsdp_comm(c, p, *in.link, fwd, bwd + rec);
    }
    s.comm_floor_ms = comm.floor_ms;
    s.exposed_comm_ms = comm.exposed_ms;
    s.contention_ms = in.contention * std::max(0.0, comm.floor_ms - comm.exposed_ms);
  }
  s.step_ms =
      s.data_wait_ms + s.h2d_ms + s.forward_ms + s.backward_ms + s.optimizer_ms + s.exposed_comm_ms + s.contention_ms;
  s.tokens_per_step = static_cast<double>(c.tokens_per_rank_step()) * n;
  if (s.step_ms > 0) {
    s.tokens_per_s_total = s.tokens_per_step / (s.step_ms / 1e3);
    s.tokens_per_s_per_gpu = s.tokens_per_s_total / n;
  }
  const double flops_per_token = metrics::palm_flops_per_token(
      metrics::llama_matmul_parameters(c.dims.layers, c.dims.dim, c.dims.kv_dim(), c.dims.ffn, c.dims.vocab),
      c.dims.layers, c.dims.dim, c.seq_len);
  s.mfu = metrics::model_flops_utilisation(s.tokens_per_s_per_gpu, flops_per_token, in.gpu->bf16_tflops);
  return s;
}

}  // namespace tunebench::predict
