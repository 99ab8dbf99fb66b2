#include "core/analysis/diagnosis.h"

#include "core/config/script.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"
#include "core/metrics/gpu_activity.h"

namespace tunebench::analysis {

using config::Strategy;

namespace {

std::string num(int64_t v) { return std::to_string(v); }

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// ---- suggestions ---------------------------------------------------------------------------------

Suggestion change(std::string key, std::string value, std::string why) {
  Suggestion s{key + " " + value, {{key, value}}, std::move(why)};
  return s;
}

// Each suggestion is made only when the config knows the knobs it reads (imported traces know
// few, TrialMetrics::knows).
void memory_suggestions(const TrialMetrics& m, std::vector<Suggestion>& out, bool oom) {
  if (!m.config) return;
  const auto& c = *m.config;
  if (m.knows({"checkpointing"}) && !c.checkpointing) {
    out.push_back(change("checkpointing", "true",
                         "recomputes each block's forward in backward instead of keeping its activations: "
                         "less memory for about a third more compute"));
    if (!oom && m.knows({"micro_batch"}))
      out.push_back(
          {"checkpointing true + micro_batch " + num(c.micro_batch * 2),
           {{"checkpointing", "true"}, {"micro_batch", num(c.micro_batch * 2)}},
           "spend the freed activation memory on a larger batch, which keeps the " + device_noun(m) + " busier"});
  }
  if (oom && m.knows({"micro_batch"}) && c.micro_batch > 1)
    out.push_back(change("micro_batch", num(c.micro_batch / 2), "halves the activation memory"));
  // Only where config::validate allows it (one rank, no clipping, no fp16, no CUDA graph).
  const auto overlap_allowed = [&c] {
    config::TrialConfig overlapped = c;
    overlapped.optimizer_overlap = true;
    const auto problems = config::validate(overlapped);
    return std::none_of(problems.begin(), problems.end(),
                        [](const config::Problem& p) { return p.key == "optimizer_overlap"; });
  };
  if (m.knows({"optimizer_overlap", "strategy", "world_size", "grad_clip", "amp", "compile"}) && !c.optimizer_overlap &&
      overlap_allowed())
    out.push_back(change("optimizer_overlap", "true",
                         "updates each block and frees its gradients as soon as the backward has them, instead "
                         "of holding every gradient until the backward ends (7B on an H200: 3 GiB less at the "
                         "peak, the same step time)"));
  if (m.knows({"strategy", "world_size", "compression"}) && c.strategy == Strategy::Ddp && c.world_size >= 2) {
    Suggestion s =
        change("strategy", "fsdp",
               "shards parameters, gradients and optimizer state over the " + num(c.world_size) + " " +
                   device_noun(m, true) + " instead of replicating them (16 bytes per parameter with AdamW)");
    if (c.compression != config::Compression::None) s.changes.push_back({"compression", "none"});
    out.push_back(std::move(s));
  }
  if (m.knows({"amp"}) && (c.amp == config::Amp::Fp32 || c.amp == config::Amp::Tf32))
    out.push_back(change("amp", "bf16", "bf16 activations take half the memory of fp32"));
}

// ---- rules -----------------------------------------------------------------------------------------

void failure_rule(const TrialMetrics& m, std::vector<Finding>& out) {
  if (m.oom) {
    Finding f{FindingKind::MemoryBound, "out of memory: the trial failed", "", 0.0, 0.0, true, {}};
    for (const auto& e : m.errors)
      if (e.rfind("oom", 0) == 0) f.detail += e + "\n";
    memory_suggestions(m, f.suggestions, true);
    out.push_back(std::move(f));
  } else if (!m.errors.empty() && m.measured_steps == 0) {
    out.push_back({FindingKind::Failed, "the trial failed: " + m.errors.front(), "", 0.0, 0.0, true, {}});
  }
}

void memory_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  if (m.oom) return;
  const bool near_full = m.peak_fraction && *m.peak_fraction >= kPeakMemoryShare;
  if (!near_full && m.alloc_retries == 0) return;
  Finding f;
  f.kind = FindingKind::MemoryBound;
  f.title = "memory-bound: peak " + format_gib(static_cast<double>(m.peak_bytes));
  if (m.peak_fraction)
    f.title +=
        " of " + format_gib(static_cast<double>(m.device_memory_bytes)) + " (" + format_pct(*m.peak_fraction) + ")";
  if (m.alloc_retries > 0) {
    // A retry frees the allocator's cache and synchronises the device: the stall shows up as idle.
    f.impact_ms = m.breakdown.idle_ms();
    f.title += ", " + num(m.alloc_retries) + " allocator retries, " + format_ms(f.impact_ms) + " idle per step";
    f.detail =
        "Each cudaMalloc retry frees the caching allocator's blocks and synchronises the device; the "
        "stalls appear as idle time in the breakdown.";
  } else {
    f.detail = "No allocator retries yet, but there is no room to raise the micro-batch.";
  }
  f.share = step_ms > 0 ? f.impact_ms / step_ms : 0.0;
  memory_suggestions(m, f.suggestions, false);
  out.push_back(std::move(f));
}

void data_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  const double wait = m.breakdown[Part::DataWait];
  const double h2d = m.breakdown[Part::HostToDevice];
  if (step_ms <= 0 || (wait + h2d) / step_ms < kDataWaitShare) return;
  Finding f;
  f.kind = FindingKind::DataBound;
  f.impact_ms = wait + h2d;
  f.share = f.impact_ms / step_ms;
  // Without a data wait that is a real share of the step the loader is not the story: only copies.
  if (wait / step_ms < kRealDataWaitShare) {
    f.title = "host-to-device copies: " + format_ms(h2d) + " per step (mean; " + format_pct(f.share) +
              " of the mean step, " + format_ms(step_ms) + "), with the device otherwise quiet";
    f.detail = "The data wait is " + format_ms(wait) + " per step: the loader keeps up; the time is the copy itself.";
    if (m.knows({"pin_memory"}) && !m.config->pin_memory && on_gpu(m))
      f.suggestions.push_back(change("pin_memory", "true", "page-locked batches copy asynchronously"));
    out.push_back(std::move(f));
    return;
  }
  f.title = "data-bound: data wait " + format_ms(wait) + (h2d > 0 ? " + host-to-device " + format_ms(h2d) : "") +
            " per step (mean; " + format_pct(f.share) + " of the mean step, " + format_ms(step_ms) + ")";
  if (m.config) {
    const auto& c = *m.config;
    if (m.knows({"sample_cpu_us", "micro_batch", "grad_accum", "num_workers"}) && c.sample_cpu_us > 0) {
      const double cpu_ms = static_cast<double>(c.micro_batch * c.grad_accum) * c.sample_cpu_us / 1000.0;
      f.detail = "Preparing a step's batches costs " + num(c.micro_batch * c.grad_accum) + " samples x " +
                 format_fixed(c.sample_cpu_us, 0) + " µs = " + format_ms(cpu_ms) + " of CPU" +
                 (c.num_workers == 0 ? ", on the training thread (num_workers 0)."
                                     : " spread over " + std::to_string(c.num_workers) + " loader threads.");
    }
    const int workers = c.num_workers == 0 ? 4 : std::min(64, c.num_workers * 2);
    if (m.knows({"num_workers"}) && c.num_workers < 64)
      f.suggestions.push_back(change("num_workers", std::to_string(workers),
                                     "loader threads prepare the next batches while the " + device_noun(m) +
                                         " computes, so data wait "
                                         "can drop towards 0 (up to " +
                                         format_ms(wait) + " per step)"));
    if (m.knows({"pin_memory"}) && !c.pin_memory && on_gpu(m))
      f.suggestions.push_back(change("pin_memory", "true", "page-locked batches copy asynchronously"));
  }
  out.push_back(std::move(f));
}

void comm_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  const double exposed = m.breakdown[Part::ExposedComm];
  if (m.world_size < 2 || step_ms <= 0 || exposed / step_ms < kExposedCommShare) return;
  Finding f;
  f.kind = FindingKind::CommBound;
  f.impact_ms = exposed;
  f.share = exposed / step_ms;
  f.title = "communication-bound: exposed " + collective_name(m) + " " + format_ms(exposed) + " per step (mean; " +
            format_pct(f.share) + " of the mean step, " + format_ms(step_ms) + ")";
  const std::string clause = comm_clause(m);
  if (!clause.empty()) f.title += "; " + clause;
  const std::string fl = floor_clause(m);
  if (!fl.empty()) f.detail = "Communication floor with nothing overlapped: " + fl + ".";
  if (m.collectives)
    f.detail += (f.detail.empty() ? "" : " ") + capitalised(collective_split_sentence(*m.collectives)) + ".";
  if (!m.knows({"strategy"})) {
    out.push_back(std::move(f));
    return;
  }
  const auto& c = *m.config;
  if (c.strategy == Strategy::Ddp) {
    if (m.knows({"ddp_overlap"}) && !c.ddp_overlap)
      f.suggestions.push_back(change("ddp_overlap", "true",
                                     "all-reduce buckets while backward runs: up to " +
                                         format_ms(m.breakdown[Part::Backward]) + " of backward to hide behind"));
    if (m.knows({"grad_accum"})) {
      const int64_t accum = grad_accum_for_exposed(c, exposed, step_ms);
      if (accum > c.grad_accum) f.suggestions.push_back(grad_accum_suggestion(c, accum, exposed, step_ms));
    }
    if (m.knows({"compression"}) && c.compression == config::Compression::None && gradient_dtype(m) != "bf16" &&
        gradient_dtype(m) != "16-bit" && gradient_dtype(m) != "fp16")
      f.suggestions.push_back(change(
          "compression", "bf16",
          "all-reduce gradients in 16 bits: half the bytes" +
              (m.comm_floor_ms ? ", floor " + format_ms(*m.comm_floor_ms) + " -> " + format_ms(*m.comm_floor_ms / 2)
                               : std::string())));
    if (m.knows({"bucket_mb"}) && c.bucket_mb < 100)
      f.suggestions.push_back(change("bucket_mb", "100",
                                     "fewer, larger all-reduces: small messages reach a lower bus bandwidth "
                                     "than large ones on every link, at the cost of a later first all-reduce"));
  } else if (c.strategy == Strategy::Fsdp) {
    if (m.knows({"fsdp_prefetch"}) && !c.fsdp_prefetch)
      f.suggestions.push_back(change("fsdp_prefetch", "true", "gather the next block while this one computes"));
    if (m.knows({"fsdp_mode"}) && c.fsdp_mode == config::FsdpMode::FullShard)
      f.suggestions.push_back(change("fsdp_mode", "shard_grad_op",
                                     "keep gathered parameters from forward to backward: no re-gather in backward "
                                     "(about a third of FSDP's traffic) for more memory"));
    if (m.knows({"fsdp_reduce_dtype"}) && c.fsdp_reduce_dtype == config::DType::Fp32)
      f.suggestions.push_back(change("fsdp_reduce_dtype", "bf16", "reduce-scatter gradients in bf16: half the bytes"));
  }
  out.push_back(std::move(f));
}

// "aten::batch_norm 1.2 ms, aten::conv2d 0.8 ms" of the top ops; an empty name is `unnamed` (host
// waits: code between ops; dependency waits: a dependency the records do not show).
std::string ops_clause(const std::vector<std::pair<std::string, double>>& ops,
                       const std::string& unnamed = "no op (framework code between ops)", size_t n = 3) {
  std::string s;
  for (size_t i = 0; i < ops.size() && i < n; ++i)
    s += (i ? ", " : "") + (ops[i].first.empty() ? unnamed : ops[i].first) + " " + format_ms(ops[i].second);
  return s;
}

// Host-bound: the GPU waits for the host. On kernel-sampled steps the idle parts are measured on
// the device (host wait, launch gaps, sync); without samples only the gaps between phases show.
// Fixes in the order of their measured effect (docs/BENCHMARKS.md): a CUDA graph, a larger
// micro-batch, fused kernels, fewer synchronisations, loader threads.
void idle_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  const double idle = m.breakdown.idle_ms();
  if (m.alloc_retries > 0 || step_ms <= 0 || idle / step_ms < rules::kIdleShare) return;  // retries own the idle
  const auto& b = m.breakdown;
  Finding f;
  f.kind = FindingKind::IdleBound;
  f.impact_ms = idle;
  f.share = idle / step_ms;
  const std::string gpu = on_gpu(m) ? "GPU" : device_noun(m);
  if (m.gpu_busy_share) {
    f.title = "host-bound: the " + gpu + " is idle " + format_pct(1.0 - *m.gpu_busy_share) + " of the step (";
    std::string parts;
    for (Part p : {Part::HostWait, Part::LaunchGap, Part::SyncWait})
      if (b[p] > 0) parts += (parts.empty() ? "" : ", ") + std::string(label(p)).substr(10) + " " + format_ms(b[p]);
    f.title += parts + " per " + format_ms(step_ms) + " step; means)";
    if (b[Part::HostWait] > 0)
      f.detail += "Host wait " + format_ms(b[Part::HostWait]) +
                  " per step: the CPU had not issued the next kernel yet. It was running: " +
                  ops_clause(m.host_wait_ops) + ".\n";
    if (b[Part::LaunchGap] > 0)
      f.detail += "Launch gaps " + format_ms(b[Part::LaunchGap]) +
                  " per step: between kernels already issued, the per-kernel launch latency; a CUDA graph "
                  "replays them without it.\n";
    if (b[Part::SyncWait] > 0)
      f.detail += "Synchronisation " + format_ms(b[Part::SyncWait]) + " per step in " + ops_clause(m.sync_ops) +
                  ": the host waits for the GPU, which then runs dry until the host issues more. Fewer syncs: "
                  "keep values such as the loss on the device and read them every N steps.\n";
    f.detail += "GPU busy (kernels, copies and memsets) " + format_pct(*m.gpu_busy_share) + " of the step, from " +
                std::to_string(m.sampled_steps) + " kernel-sampled step" + (m.sampled_steps == 1 ? "" : "s") +
                (m.gpu_util_pct ? "; NVML reports " + format_fixed(*m.gpu_util_pct, 0) +
                                      " % utilisation, which counts any kernel running, not how much of the step"
                                : std::string()) +
                ".";
  } else {
    f.title = "host-bound: the " + gpu + " is idle " + format_ms(idle) + " per step (mean; " + format_pct(f.share) +
              ") between its phases";
    // Kernel sampling records GPU kernels: a CPU rank has none to record, so no advice to.
    f.detail = on_gpu(m) ? "No kernel-sampled steps (GPU busy unknown): only the gaps between phases show; the time the " +
                               gpu + " idles inside forward and backward is counted as compute. Record kernels "
                               "(kernel_sample_every) to see it."
                         : "Only the gaps between phases show; the time the " + gpu +
                               " waits inside forward and backward is counted as compute.";
  }
  if (m.config) {
    const auto& c = *m.config;
    if (m.knows({"strategy", "compile"}) && c.strategy == Strategy::Single && !config::uses_cuda_graph(c.compile) &&
        on_gpu(m))
      f.suggestions.push_back(change("compile", config::uses_fused_kernels(c.compile) ? "fused+graph" : "graph",
                                     "CUDA-graph capture replays the whole step with one launch: no host wait and "
                                     "no launch gaps between its kernels"));
    if (m.knows({"micro_batch"}) && (!m.peak_fraction || *m.peak_fraction < kHeadroomShare))
      f.suggestions.push_back(
          change("micro_batch", num(c.micro_batch * 2),
                 "twice the work per kernel for the same launches" +
                     (m.peak_fraction ? "; peak memory is only " + format_pct(*m.peak_fraction) : std::string())));
    if (m.knows({"compile"}) && !config::uses_fused_kernels(c.compile) && on_gpu(m))
      f.suggestions.push_back(change("compile", config::uses_cuda_graph(c.compile) ? "fused+graph" : "fused",
                                     "fused kernels: fewer kernels, so fewer launches to wait for"));
    if (m.knows({"num_workers"}) && b[Part::DataWait] > 0.01 * step_ms && c.num_workers < 64)
      f.suggestions.push_back(change("num_workers", std::to_string(c.num_workers == 0 ? 4 : std::min(64, c.num_workers * 2)),
                                     "data wait " + format_ms(b[Part::DataWait]) +
                                         " per step shows: loader threads prepare batches while the GPU runs"));
  }
  out.push_back(std::move(f));
}

// Dependency waits: queued work the device held longer than a launch latency, waiting on another
// stream's event, a collective or a copy (metrics/gpu_activity.h). Not the host's and not launch
// latency, so no CUDA graph; the suggestion matches what held it, or there is none.
void dependency_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  const double held = m.breakdown[Part::DependencyWait];
  if (step_ms <= 0 || held / step_ms < kDependencyWaitShare) return;
  Finding f;
  f.kind = FindingKind::DependencyBound;
  f.impact_ms = held;
  f.share = held / step_ms;
  f.title = "dependency waits: queued work held " + format_ms(held) + " per step (mean; " + format_pct(f.share) +
            " of the mean step, " + format_ms(step_ms) + ")";
  const auto& ops = m.dependency_ops;
  if (!ops.empty()) f.title += ", mostly by " + (ops.front().first.empty() ? std::string("an unseen dependency")
                                                                           : ops.front().first);
  f.detail = "The GPU ran nothing although its next work had been issued: it waited for another stream, a collective "
             "or a copy, not for the launch (launch latency is at most " +
             format_ms(static_cast<double>(metrics::kLaunchLatencyUs) / 1000.0) +
             "); a CUDA graph does not remove it. By what: " +
             ops_clause(m.dependency_ops, "a dependency the trace does not show") + ".";
  bool collective = false, stream = false;
  for (const auto& [name, ms] : ops) {
    collective = collective || name.find("(a collective)") != std::string::npos;
    stream = stream || name.rfind("cudaStreamWaitEvent", 0) == 0;
  }
  if (stream)
    f.detail += " Fewer synchronisations between streams (event waits) let each stream run ahead.";
  if (collective && m.knows({"strategy"}) && m.config->strategy == Strategy::Ddp) {
    const auto& c = *m.config;
    if (m.knows({"ddp_overlap"}) && !c.ddp_overlap)
      f.suggestions.push_back(change("ddp_overlap", "true", "all-reduce buckets while backward runs instead of after it"));
    if (m.knows({"bucket_mb"}) && c.bucket_mb < 100)
      f.suggestions.push_back(change("bucket_mb", "100", "fewer all-reduces for the compute stream to wait on"));
  }
  out.push_back(std::move(f));
}

// A rank that works longer than the others makes them wait inside their collectives, where the
// wait looks like exposed communication. Busy time = step - exposed communication - idle.
// "; it is late by its data wait (+48.0 ms per step)" when one part of the last rank's step, above
// the mean of the others', explains at least half of their wait; "" otherwise.
std::string late_phase_clause(const TrialMetrics& m, const CollectiveSplit& split) {
  const RankMetrics* late = nullptr;
  for (const auto& r : m.ranks)
    if (r.rank == split.last_rank) late = &r;
  if (!late || m.ranks.size() < 2 || split.others_wait_ms_per_step <= 0) return "";
  Part worst = Part::Idle;
  double worst_ms = 0;
  for (Part p : kAllParts) {
    if (p == Part::ExposedComm || p == Part::DependencyWait) continue;
    double others = 0;
    for (const auto& r : m.ranks)
      if (&r != late) others += r.breakdown[p];
    const double more = late->breakdown[p] - others / static_cast<double>(m.ranks.size() - 1);
    if (more > worst_ms) worst_ms = more, worst = p;
  }
  if (worst_ms < 0.5 * split.others_wait_ms_per_step) return "";
  return "; it is late by its " + std::string(label(worst)) + " (" + format_signed_ms(worst_ms) + " per step)";
}

void imbalance_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  if (m.ranks.size() < 2 || step_ms <= 0) return;
  auto busy = [](const RankMetrics& r) {
    return r.breakdown.step_ms - r.breakdown[Part::ExposedComm] - r.breakdown.idle_ms() -
           r.breakdown[Part::DependencyWait];
  };
  const RankMetrics* slow = &m.ranks.front();
  const RankMetrics* fast = &m.ranks.front();
  for (const auto& r : m.ranks) {
    if (busy(r) > busy(*slow)) slow = &r;
    if (busy(r) < busy(*fast)) fast = &r;
  }
  const double gap = busy(*slow) - busy(*fast);
  // The collectives' own account (collective_split.h): who arrived last, how long the others waited.
  const auto& split = m.collectives;
  const bool waits = split && split->others_wait_ms_per_step / step_ms >= kImbalanceShare;
  if (gap / step_ms < kImbalanceShare && !waits) return;
  Finding f;
  f.kind = FindingKind::Imbalance;
  if (gap / step_ms >= kImbalanceShare) {
    Part worst = Part::Forward;
    for (Part p : kAllParts) {
      if (p == Part::ExposedComm || p == Part::DependencyWait || is_idle(p)) continue;
      if (slow->breakdown[p] - fast->breakdown[p] > slow->breakdown[worst] - fast->breakdown[worst]) worst = p;
    }
    f.impact_ms = gap;
    f.title = "rank imbalance: rank " + std::to_string(slow->rank) + " is busy " + format_ms(gap) +
              " longer per step than rank " + std::to_string(fast->rank) + " (" + std::string(label(worst)) + " " +
              format_signed_ms(slow->breakdown[worst] - fast->breakdown[worst]) +
              "); the other ranks wait for it inside their collectives";
    f.detail = "Part of the exposed communication on the waiting ranks is this wait, not transfer time.";
    if (m.knows({"num_workers"}) && worst == Part::DataWait && m.config->num_workers < 64)
      f.suggestions.push_back(
          change("num_workers", std::to_string(m.config->num_workers == 0 ? 4 : std::min(64, m.config->num_workers * 2)),
                 "the slow rank's loader cannot keep up"));
    if (split) f.detail += " " + capitalised(collective_split_sentence(*split)) + late_phase_clause(m, *split) + ".";
  } else {
    f.impact_ms = split->others_wait_ms_per_step;
    f.title = "rank imbalance: " + collective_split_sentence(*split) + late_phase_clause(m, *split);
    f.detail = "The waiting ranks' time inside these collectives is waiting for rank " +
               std::to_string(split->last_rank) + ", not transfer time.";
  }
  f.share = f.impact_ms / step_ms;
  out.push_back(std::move(f));
}

void compute_rule(const TrialMetrics& m, double step_ms, std::vector<Finding>& out) {
  const double compute = m.breakdown[Part::Forward] + m.breakdown[Part::Backward] + m.breakdown[Part::Optimizer] +
                         m.breakdown[Part::OtherCompute];
  if (step_ms <= 0 || compute <= 0) return;
  Finding f;
  f.kind = FindingKind::ComputeBound;
  f.impact_ms = compute;
  f.share = compute / step_ms;
  f.title = "compute-bound: " + format_pct(f.share) + " of the step is compute" +
            (m.mfu           ? ", MFU " + format_pct(*m.mfu)
             : m.peak_tflops ? std::string(", MFU unknown (model size or tokens per step unknown)")
                             : std::string(", MFU unknown for this device"));
  if (m.breakdown.recompute_ms > 0)
    f.detail = "Recompute (checkpointing): " + format_ms(m.breakdown.recompute_ms) + " per step.";
  if (m.config) {
    const auto& c = *m.config;
    if (m.knows({"amp"}) && (c.amp == config::Amp::Fp32 || c.amp == config::Amp::Tf32) && on_gpu(m))
      f.suggestions.push_back(change("amp", "bf16", "bf16 tensor cores: the MFU peak assumes them"));
    if (m.knows({"compile"}) && !config::uses_fused_kernels(c.compile) && on_gpu(m))
      f.suggestions.push_back(change("compile", "fused",
                                     "fused kernels for RMSNorm, rotary embedding, SwiGLU and the loss: one pass "
                                     "over the activations instead of chains of elementwise kernels"));
    // fp8 pays where matmuls dominate: measured 0.775x the bf16 fused step at 7B (dim 4096) but
    // only 0.95x at 125m (dim 768) on an H200 (docs/BENCHMARKS.md); Hopper only.
    const bool hopper = m.device.find("H100") != std::string::npos || m.device.find("H200") != std::string::npos;
    if (hopper && m.knows({"amp", "dim", "compile"}) && c.amp == config::Amp::Bf16 && c.dims.dim >= 2048) {
      Suggestion s = change("amp", "fp8", "float8 matmuls with delayed scaling: about 1.5x the bf16 matmul rate");
      if (!config::uses_fused_kernels(c.compile)) {
        s.changes.push_back({"compile", "fused"});  // fp8's casts are fused kernels
        s.title += " + compile fused";
      }
      f.suggestions.push_back(std::move(s));
    }
    if (m.knows({"micro_batch"}) && m.peak_fraction && *m.peak_fraction < kHeadroomShare)
      f.suggestions.push_back(change("micro_batch", num(c.micro_batch * 2), "larger matmuls run nearer the peak"));
    // A memory-bound update (AdamW moves ~30 bytes a parameter) that is a large share of the step:
    // bf16 weight gradients take 2 of them off (config::validate says where they run).
    const double update = m.breakdown[Part::Optimizer];
    if (on_gpu(m) && m.knows({"grad_dtype", "compile", "amp", "strategy", "grad_accum"}) &&
        c.grad_dtype == config::DType::Fp32 && update >= kOptimizerShare * step_ms)
      f.suggestions.push_back(
          change("grad_dtype", "bf16",
                 "the update (" + format_ms(update) + ", " + format_pct(update / step_ms) +
                     " of the step) reads the blocks' weight gradients in bf16, as autocast rounds them: 2 of "
                     "its 30 bytes a parameter (7B on an H200: 3 ms less a step, 3 GiB less at the peak)"));
  }
  out.push_back(std::move(f));
}

}  // namespace

std::string_view to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::Failed:
      return "failed";
    case FindingKind::MemoryBound:
      return "memory-bound";
    case FindingKind::DataBound:
      return "data-bound";
    case FindingKind::CommBound:
      return "communication-bound";
    case FindingKind::Imbalance:
      return "imbalance";
    case FindingKind::IdleBound:
      return "host-bound";
    case FindingKind::DependencyBound:
      return "dependency-bound";
    case FindingKind::ComputeBound:
      return "compute-bound";
    case FindingKind::Scaling:
      return "scaling";
  }
  return "?";
}

void rank_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.blocking != b.blocking) return a.blocking;
    return a.impact_ms > b.impact_ms;
  });
}

int64_t grad_accum_for_exposed(const config::TrialConfig& c, double exposed_ms, double step_ms) {
  const double rest = step_ms - exposed_ms;
  if (rest <= 0 || exposed_ms <= 0) return c.grad_accum;
  const double need = exposed_ms * (1.0 - kTargetExposedShare) / (kTargetExposedShare * rest);
  const int64_t factor = std::max<int64_t>(2, static_cast<int64_t>(std::ceil(need)));
  return std::max(c.grad_accum, std::min<int64_t>(64, c.grad_accum * factor));
}

Suggestion grad_accum_suggestion(const config::TrialConfig& c, int64_t accum, double exposed_ms, double step_ms) {
  const double rest = step_ms - exposed_ms;
  const double k = static_cast<double>(accum) / static_cast<double>(std::max<int64_t>(1, c.grad_accum));
  std::string why = "all-reduce once per " + num(accum) + " micro-steps (no_sync)";
  if (rest > 0 && step_ms > 0)
    why += ": exposed share about " + format_pct(exposed_ms / (k * rest + exposed_ms)) + " instead of " +
           format_pct(exposed_ms / step_ms);
  why += "; the optimizer batch grows " + format_fixed(k, 0) + "x";
  return change("grad_accum", num(accum), why);
}

void keep_valid_suggestions(std::vector<Finding>& findings, const config::TrialConfig& base) {
  // A recorded trial's own config may already fail a rule of this build; only problems the
  // suggestion itself brings count against it.
  std::set<std::pair<std::string, std::string>> existing;
  for (const auto& p : config::validate(base)) existing.emplace(p.key, p.message);
  for (auto& f : findings) {
    auto& s = f.suggestions;
    s.erase(std::remove_if(s.begin(), s.end(),
                           [&](const Suggestion& sug) {
                             // A script takes only what the probe applies or its arguments name.
                             if (config::is_script(base))
                               for (const auto& ch : sug.changes)
                                 if (!config::script_can_set(base, ch.key)) return true;
                             std::vector<config::Problem> problems;
                             apply(sug, base, &problems);
                             return std::any_of(problems.begin(), problems.end(), [&](const config::Problem& p) {
                               return !existing.count({p.key, p.message});
                             });
                           }),
            s.end());
  }
}

Diagnosis diagnose(const TrialMetrics& m) {
  Diagnosis d{m.trial, m.label, "", {}};
  const double step_ms = m.breakdown.step_ms > 0 ? m.breakdown.step_ms : m.step_ms.median;
  failure_rule(m, d.findings);
  memory_rule(m, step_ms, d.findings);
  data_rule(m, step_ms, d.findings);
  comm_rule(m, step_ms, d.findings);
  idle_rule(m, step_ms, d.findings);
  dependency_rule(m, step_ms, d.findings);
  imbalance_rule(m, step_ms, d.findings);
  rank_findings(d.findings);
  // Compute-bound is the verdict only when nothing else stands out, and always ranks last.
  const bool other =
      std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) { return f.blocking || f.impact_ms > 0; });
  if (!other && m.measured_steps > 0) compute_rule(m, step_ms, d.findings);
  if (m.config) keep_valid_suggestions(d.findings, *m.config);
  d.verdict = d.findings.empty()
                  ? (m.measured_steps > 0 ? "no measured phase intervals to diagnose" : "no measured steps")
                  : d.findings.front().title;
  return d;
}

config::TrialConfig apply(const Suggestion& suggestion, config::TrialConfig base,
                          std::vector<config::Problem>* problems) {
  for (const auto& ch : suggestion.changes)
    if (auto p = config::set_knob(base, ch.key, ch.value); p && problems) problems->push_back(*p);
  base.name = base.name.empty() ? suggestion.title : base.name + " + " + suggestion.title;
  if (problems)
    for (auto& p : config::validate(base))
      problems->push_back(std::move(p));
  return base;
}

}  // namespace tunebench::analysis
