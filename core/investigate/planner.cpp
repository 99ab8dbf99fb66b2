#include "core/investigate/planner.h"

#include "core/config/script.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/analysis/format.h"
#include "core/predict/memory_model.h"

namespace tunebench::investigate {
namespace {

using analysis::KnobChange;
using config::Strategy;

std::string num(double v) {
  if (std::floor(v) == v) return std::to_string(static_cast<long long>(v));
  char b[32];
  std::snprintf(b, sizeof(b), "%g", v);
  return b;
}

struct Candidate {
  std::string title;
  Category category;
  std::string source;
  std::string why;
  std::vector<KnobChange> changes;
};

Category category_of(const std::vector<KnobChange>& changes, const config::TrialConfig& base) {
  bool data = false, comm = false, batch = false, memory = false;
  for (const auto& c : changes) {
    if (c.key == "num_workers" || c.key == "pin_memory" || c.key == "sample_cpu_us") data = true;
    else if (c.key == "bucket_mb" || c.key == "compression" || c.key == "nccl_env" || c.key == "strategy" ||
             c.key == "fsdp_mode" || c.key == "ddp_overlap" || c.key == "first_bucket_mb" || c.key == "fsdp_prefetch" ||
             c.key == "fsdp_reduce_dtype")
      comm = true;
    else if (c.key == "grad_accum") (base.world_size > 1 ? comm : batch) = true;
    else if (c.key == "micro_batch") batch = true;
    else if (c.key == "checkpointing") memory = true;
  }
  if (data) return Category::Data;
  if (comm) return Category::Communication;
  if (memory) return Category::Memory;
  if (batch) return Category::Batch;
  return Category::Compute;
}

// The forum's usual suspects (docs/INVESTIGATE.md, "The planner"), only where they apply.
// Below these a suspect cannot help the measured trial: it is skipped with the measured figure.
constexpr double kDataWaitShareWorthLoaders = 0.02;     // data wait of the step
constexpr double kMemoryShareWorthCheckpointing = 0.5;  // peak memory of the device's

std::vector<Candidate> forum_suspects(const config::TrialConfig& c, const analysis::TrialMetrics& measured, bool cuda,
                                      std::vector<SkippedVariant>& skipped) {
  std::vector<Candidate> out;
  const bool dist = c.world_size > 1 && c.strategy != Strategy::Single;
  auto add = [&](std::string title, std::vector<KnobChange> changes, std::string claim, std::string why) {
    out.push_back({std::move(title), category_of(changes, c), "forum: " + std::move(claim), std::move(why),
                   std::move(changes)});
  };
  // Loader threads and pinned batches help only a trial that waits for its data.
  const double step = measured.step_ms.empty() ? 0.0 : measured.step_ms.median;
  const double wait = measured.data_wait_ms.empty() ? 0.0 : measured.data_wait_ms.median;
  const bool waits = step > 0 && wait / step >= kDataWaitShareWorthLoaders;
  const std::string wait_words = "the data wait is " + analysis::format_fixed(wait, 1) + " ms (" +
                                 analysis::format_pct(step > 0 ? wait / step : 0) + " of the step)";
  if (c.num_workers == 0) {
    std::vector<KnobChange> ch = {{"num_workers", "4"}};
    if (cuda && !c.pin_memory) ch.push_back({"pin_memory", "true"});
    const std::string title = cuda && !c.pin_memory ? "num_workers 4 + pin_memory" : "num_workers 4";
    if (waits)
      add(title, ch, "raise num_workers", "loads batches on 4 threads while the model trains");
    else
      skipped.push_back({title, Category::Data, "forum: raise num_workers", ch, "cannot help: " + wait_words});
  } else if (cuda && !c.pin_memory) {
    if (waits)
      add("pin_memory true", {{"pin_memory", "true"}}, "pin_memory=True", "page-locked batches, asynchronous copies");
    else
      skipped.push_back({"pin_memory true", Category::Data, "forum: pin_memory=True", {{"pin_memory", "true"}},
                         "cannot help: " + wait_words});
  }
  add("micro_batch " + num(c.micro_batch * 2), {{"micro_batch", num(c.micro_batch * 2)}}, "a bigger batch",
      "twice the tokens per step for the same fixed costs");
  if (dist) {
    add("grad_accum " + num(c.grad_accum * 2), {{"grad_accum", num(c.grad_accum * 2)}},
        "gradient accumulation with no_sync", "one gradient exchange per twice the tokens");
  }
  if (dist && c.strategy == Strategy::Ddp) {
    const double bucket = c.bucket_mb >= 100 ? c.bucket_mb / 4 : c.bucket_mb * 4;
    add("bucket_mb " + num(bucket), {{"bucket_mb", num(bucket)}}, "bucket_cap_mb",
        bucket > c.bucket_mb ? "fewer, larger all-reduces (less latency per byte)"
                             : "smaller buckets start the all-reduce earlier in backward");
    if (c.compression == config::Compression::None) {
      const std::string to = cuda ? "bf16" : "fp16";
      add("compression " + to, {{"compression", to}}, "fp16 gradient compression", "half the bytes on the link");
    }
    add("ZeRO-2 (fsdp shard_grad_op)", {{"strategy", "fsdp"}, {"fsdp_mode", "shard_grad_op"}}, "ZeRO / FSDP",
        "shards gradients and optimizer state; parameters stay gathered through backward");
    add("ZeRO-3 (fsdp full_shard)", {{"strategy", "fsdp"}, {"fsdp_mode", "full_shard"}}, "ZeRO / FSDP",
        "shards everything; gathers each block's parameters when it runs");
  }
  // Checkpointing buys memory with compute: worth trying when memory is short, or to give it back.
  if (c.checkpointing || !measured.peak_fraction || *measured.peak_fraction >= kMemoryShareWorthCheckpointing)
    add(c.checkpointing ? "checkpointing false" : "checkpointing true",
        {{"checkpointing", c.checkpointing ? "false" : "true"}}, "activation checkpointing",
        c.checkpointing ? "no recompute, more activation memory" : "less activation memory for about a third more compute");
  else
    skipped.push_back({"checkpointing true", Category::Memory, "forum: activation checkpointing",
                       {{"checkpointing", "true"}},
                       "cannot help: the trial uses " + analysis::format_pct(*measured.peak_fraction) +
                           " of the device's memory; checkpointing only trades compute for memory it does not need"});
  if (cuda && c.compile == config::Compile::Off)
    add("compile fused", {{"compile", "fused"}}, "torch.compile", "fused elementwise kernels (libtorch has no torch.compile)");
  if (cuda && (c.amp == config::Amp::Fp32 || c.amp == config::Amp::Tf32))
    add("amp bf16", {{"amp", "bf16"}}, "AMP", "bf16 autocast: tensor-core matmuls, half the activation bytes");
  if (!cuda && c.compile == config::Compile::Off)
    skipped.push_back({"compile fused", Category::Compute, "forum: torch.compile", {{"compile", "fused"}},
                       "not relevant: the fused kernels are CUDA kernels and this trial runs on the CPU"});
  // NCCL transport: only where the topology makes it matter.
  if (dist && cuda) {
    auto p2p = c.nccl_env.find("NCCL_P2P_DISABLE");
    if (p2p != c.nccl_env.end() && p2p->second == "1") {
      std::string rest;
      for (const auto& [k, v] : c.nccl_env)
        if (k != "NCCL_P2P_DISABLE") rest += (rest.empty() ? "" : ",") + k + "=" + v;
      add("NCCL_P2P_DISABLE unset", {{"nccl_env", rest}}, "NCCL transport",
          "peer-to-peer transport (NVLink or PCIe P2P) instead of staging through host memory");
    }
    if (c.world_size > 2)
      add("NCCL_ALGO=Tree", {{"nccl_env", "NCCL_ALGO=Tree"}}, "NCCL ring vs tree", "tree all-reduce: fewer hops");
    else
      skipped.push_back({"NCCL_ALGO=Tree", Category::Communication, "forum: NCCL ring vs tree",
                         {{"nccl_env", "NCCL_ALGO=Tree"}},
                         "not relevant: with 2 ranks ring and tree exchange the same bytes over the same link"});
  }
  if (!dist)
    skipped.push_back({"communication settings", Category::Communication, "forum: all-reduce, buckets, NCCL",
                       {}, "not relevant: a single rank has no communication"});
  return out;
}

std::string gib(double bytes) { return analysis::format_gib(bytes); }

}  // namespace

bool runs_on_cuda(const config::TrialConfig& config, const std::string& device_name) {
  if (config.device == config::Device::Cuda) return true;
  if (config.device == config::Device::Cpu) return false;
  return !device_name.empty() && device_name.find("cpu") == std::string::npos &&
         device_name.find("CPU") == std::string::npos;
}

InvestigationPlan plan_investigation(const analysis::TrialMetrics& baseline, int64_t baseline_trial,
                                     const PlanOptions& options) {
  if (!baseline.config) throw std::runtime_error("the trial has no configuration to vary");
  // Re-running the baseline needs every setting: defaults standing in for unknown ones would
  // measure another configuration.
  // A script's own settings are unknown by nature: running it again runs them again.
  if (!baseline.unknown_knobs.empty() && !config::is_script(*baseline.config))
    throw std::runtime_error(std::to_string(baseline.unknown_knobs.size()) +
                             " settings of the trial are unknown (an imported trace), e.g. " +
                             baseline.unknown_knobs.front() +
                             ": fill them in (tunebench-cli settings, or Trial > Settings…) before investigating it");
  InvestigationPlan plan;
  plan.baseline_trial = baseline_trial;
  config::TrialConfig base = *baseline.config;
  if (options.steps > 0) base.steps = options.steps;
  if (options.warmup >= 0) base.warmup = options.warmup;
  plan.baseline = base;
  const bool cuda = runs_on_cuda(base, baseline.device);
  const int64_t memory = options.device_memory_bytes > 0 ? options.device_memory_bytes : baseline.device_memory_bytes;

  const auto diagnosis = analysis::diagnose(baseline);
  plan.diagnosis = diagnosis.verdict;
  std::vector<Candidate> candidates;
  for (const auto& f : diagnosis.findings)
    for (const auto& s : f.suggestions)
      candidates.push_back({s.title, category_of(s.changes, base), "diagnosis: " + std::string(to_string(f.kind)),
                            s.why, s.changes});
  for (auto& c : forum_suspects(base, baseline, cuda, plan.skipped)) candidates.push_back(std::move(c));

  std::vector<config::TrialConfig> seen = {base};
  for (const auto& cand : candidates) {
    auto skip = [&](std::string reason) {
      plan.skipped.push_back({cand.title, cand.category, cand.source, cand.changes, std::move(reason)});
    };
    if (config::is_script(base)) {
      const auto own = std::find_if(cand.changes.begin(), cand.changes.end(),
                                    [&](const auto& ch) { return !config::script_can_set(base, ch.key); });
      if (own != cand.changes.end()) {
        skip("the script sets " + own->key + " itself (the probe cannot apply it; name it in its arguments as {" +
             own->key + "} to make it a knob)");
        continue;
      }
    }
    analysis::Suggestion s{cand.title, cand.changes, cand.why};
    std::vector<config::Problem> problems;
    config::TrialConfig cfg = analysis::apply(s, base, &problems);
    if (!problems.empty()) {
      skip("invalid: " + config::describe(problems));
      continue;
    }
    config::TrialConfig unnamed = cfg;
    unnamed.name = base.name;
    if (std::any_of(seen.begin(), seen.end(), [&](const auto& c) { return c == unnamed; })) continue;  // a repeat
    seen.push_back(unnamed);
    if (memory > 0 && !config::is_script(cfg)) {  // a script's memory is not the benchmark model's
      predict::MemoryOptions mo;
      mo.cuda = cuda;
      const auto pred = predict::predict_memory(cfg, mo);
      if (predict::fit_of(pred, memory) == predict::Fit::DoesNotFit) {
        skip("does not fit: predicted " + gib(static_cast<double>(pred.device_needed_bytes)) + " per device, " +
             gib(static_cast<double>(memory)) + " available");
        continue;
      }
    }
    Variant v;
    v.arm = "v" + std::to_string(plan.variants.size() + 1);
    v.title = cand.title;
    v.category = cand.category;
    v.source = cand.source;
    v.why = cand.why;
    v.changes = cand.changes;
    v.config = cfg;
    plan.variants.push_back(std::move(v));
  }
  return plan;
}

}  // namespace tunebench::investigate
