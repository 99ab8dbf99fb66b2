#include "core/report/hardware_figures.h"

#include <stdexcept>

#include "core/analysis/format.h"

namespace tunebench::report {
namespace {

// The memory model's options for the trial as it ran: the device, and fused AdamW on libtorch 2.x.
predict::MemoryOptions options_of(const protocol::TrialLog& log, int64_t& device_memory) {
  predict::MemoryOptions o;
  device_memory = 0;
  for (const auto& [rank, r] : log.ranks) {
    if (!r.hello) continue;
    o.cuda = r.hello->device_kind == "cuda";
    o.fused_adamw = o.cuda && !r.hello->torch.empty() && r.hello->torch[0] >= '2';
    device_memory = r.hello->device_memory_bytes;
    break;
  }
  if (o.cuda && device_memory > 0) o.device_memory_bytes = device_memory;
  return o;
}

}  // namespace

HardwareFigures hardware_figures(const store::LoadedTrial& trial, const analysis::TrialMetrics& m) {
  HardwareFigures h;
  if (m.joules_per_step && m.tokens_per_joule)
    h.energy = analysis::format_count(*m.joules_per_step) + " J per step, " + analysis::format_fixed(*m.tokens_per_joule, 1) +
               " tokens/J (±" + analysis::format_pct(m.energy_error_bound) + ")";
  else
    h.energy = "unknown: " + (m.energy_problem.empty() ? std::string("no energy readings") : m.energy_problem);
  if (m.sm_activity_pct)
    h.activity = "SM " + analysis::format_fixed(*m.sm_activity_pct, 0) + " %" +
                 (m.tensor_activity_pct ? ", tensor cores " + analysis::format_fixed(*m.tensor_activity_pct, 0) + " %" : "");
  else
    h.activity = "unknown: " + m.activity_problem;

  const protocol::TrialLog& log = trial.log;
  int64_t device_memory = 0;
  const predict::MemoryOptions options = options_of(log, device_memory);
  const protocol::Step* sampled = nullptr;
  for (const auto& [rank, r] : log.ranks) {
    const protocol::Step* last = nullptr;
    for (const auto& s : r.steps)
      if (s.memory_sampled && !s.warmup) last = &s;
    if (last && (!sampled || last->memory_categories.allocated_bytes() > sampled->memory_categories.allocated_bytes())) {
      sampled = last;
      h.rank = rank;
    }
    for (const auto& w : r.warnings)
      if (w.value.kind == "memory-categories" && h.memory_problem.empty()) h.memory_problem = w.value.message;
  }
  if (sampled && m.config) {
    h.memory = predict::compare_memory(sampled->memory_categories, predict::predict_memory(*m.config, options));
    h.memory_step = sampled->step;
    h.memory_phase = sampled->memory_categories.phase;
    h.reserved_free_bytes = sampled->memory_categories.reserved_free_bytes;
  } else if (sampled) {
    h.memory_problem = "the trial carries no configuration to predict from";
  } else if (h.memory_problem.empty()) {
    h.memory_problem = "no memory-sampled step (CUDA workers sample the kernel-sampled steps)";
  }

  for (const auto& [rank, r] : log.ranks)
    for (const auto& e : r.errors) {
      if (e.value.kind != "oom" || h.oom) continue;
      if (!e.value.details.contains("memory_categories")) {
        h.oom_problem = "rank " + std::to_string(rank) +
                        " ran out of memory; its allocator state was not recorded (CPU, or libtorch before 2.0)";
        continue;
      }
      if (!m.config) {
        h.oom_problem = "the trial carries no configuration to explain its out-of-memory with";
        continue;
      }
      try {
        h.oom = predict::explain_oom(*m.config, e.value.details, device_memory, options);
      } catch (const std::exception& ex) {
        h.oom_problem = std::string("the out-of-memory record cannot be read: ") + ex.what();
      }
    }
  return h;
}

}  // namespace tunebench::report
