// The numbers of one trial (or of repeated trials of one configuration, pooled).
//
// Each metric has exactly one definition, written beside its field and in docs/ANALYSIS.md.
// Per-step figures are taken over measured steps only (warm-up excluded). Ranks are aligned by
// step index; the step time of a step is that of its slowest rank (step_time.h), and the
// trial-level breakdown, communication and data-wait figures are those of the critical rank: among
// the ranks within 1 % of the slowest, the busiest (the one the others waited for).
// This file computes numbers; diagnosis.h turns them into words and suggestions.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/collective_split.h"
#include "core/analysis/phase_breakdown.h"
#include "core/analysis/statistics.h"
#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

inline constexpr size_t kTopOps = 5;

// Mean over measured steps of a breakdown, in ms. Means add up, so part_ms sums to step_ms.
struct MeanBreakdown {
  std::array<double, kPartCount> part_ms{};
  double step_ms = 0.0;
  double comm_ms = 0.0;       // union of collectives (exposed + hidden)
  double recompute_ms = 0.0;  // inside the backward part
  double compute_ms = 0.0;    // union of compute-lane intervals
  double operator[](Part p) const { return part_ms[static_cast<size_t>(p)]; }
  // Host wait + launch gaps + sync wait + unattributed idle.
  double idle_ms() const;
};
MeanBreakdown mean_of(const std::vector<PhaseBreakdown>& steps);
// `b` with every part (and comm, recompute, compute) times step_ms / b.step_ms: the same shares of
// a step of step_ms. b unchanged when its step is 0.
MeanBreakdown scaled_to(const MeanBreakdown& b, double step_ms);

// Kernel-sampled steps stand for the others only where they agree (docs/ANALYSIS.md, "Which
// steps, which rank"): scaled to the unsampled steps' mean step, each part the unsampled steps
// measure the same way (data wait, host-to-device, exposed communication) is within this share of
// the unsampled step of theirs. A sample longer than the step it samples (a profiler start-up of
// 0.8 ms in a 1.2 ms CUDA-graph step) fails it.
inline constexpr double kSampleTolerance = 0.10;
// Which of the kernel-sampled steps' parts (the measured GPU idle) the breakdown rests on.
enum class SampleUse {
  None,            // no kernel-sampled measured step: the timeline's phases
  All,             // every measured step is sampled (an imported trace): their own parts
  Scaled,          // sampled and unsampled steps agree: the sampled parts scaled to the unsampled step
  NotRepresentative,  // they do not: the unsampled steps' timeline, and a note that says so
};
// True when the sampled steps' parts `sampled`, scaled to the unsampled mean step, agree with the
// unsampled steps' `unsampled` within kSampleTolerance (above).
bool samples_represent(const MeanBreakdown& sampled, const MeanBreakdown& unsampled);

struct RankMetrics {
  int rank = 0;
  Spread step_ms;
  MeanBreakdown breakdown;  // this rank's own steps
};

struct TrialMetrics {
  std::string trial;                          // trial id (of the first repeat)
  std::string label;                          // config name, else the trial id
  std::vector<std::string> repeat_ids;        // every pooled trial's id (size = repeats)
  std::optional<config::TrialConfig> config;  // nullopt when no hello carried a config
  // Knobs the config does not know (an imported trace, config/known_settings.h): `config` holds
  // defaults for them, which no figure or suggestion may use. Empty for native trials.
  std::vector<std::string> unknown_knobs;
  int world_size = 1;
  std::string device;               // hello device name
  int64_t device_memory_bytes = 0;  // per device, 0 if unknown
  int64_t parameters = 0;           // model event, 0 if unknown
  int64_t measured_steps = 0;       // pooled over repeats
  // The worker's environment switches the trial ran with (environment_switches): part of what it
  // measured, as its config is. Repeats of one configuration share them (analyze_grouped).
  std::map<std::string, std::string> switches;

  Spread step_ms;                         // per step: slowest rank's end_us - start_us (step_time.h)
  double tokens_per_step = 0;             // all ranks together (median over steps)
  Spread tokens_per_s_total;              // tokens_per_step / step time (quartiles from the step-time quartiles)
  Spread tokens_per_s_per_gpu;            // tokens_per_s_total / world_size
  // Samples (a CNN's images) where the config gives samples_per_step (throughput.h): all ranks'
  // samples per step (median; 0: not counted), over the step time as tokens are.
  double samples_per_step = 0;
  Spread samples_per_s_total;
  Spread samples_per_s_per_gpu;           // samples_per_s_total / world_size
  std::optional<double> flops_per_token;  // PaLM convention (core/metrics/flops.h)
  std::optional<double> peak_tflops;      // dense bf16 peak of the device
  std::optional<double> mfu;              // 0..1 from the median tokens/s per GPU

  // Critical rank per step, mean over steps. When some measured steps are kernel-sampled (every
  // imported step; sampled steps of native trials), over those only: their compute parts are the
  // time kernels ran and their GPU-idle parts are measured (phase_breakdown.h).
  MeanBreakdown breakdown;
  int64_t sampled_steps = 0;              // measured steps (critical rank) with kernel intervals
  SampleUse sample_use = SampleUse::None;  // how the breakdown used them
  // GPU busy: union of kernel/memcpy/memset intervals over the step (metrics/gpu_activity.h),
  // median over the sampled steps; nullopt: unknown (no sampled step).
  std::optional<double> gpu_busy_share;
  // What the host ran during the GPU-idle gaps of the sampled steps, ms per step by name, largest
  // first (at most kTopOps): the CPU op in host-wait gaps ("" = no op), the issuing op of syncs.
  std::vector<std::pair<std::string, double>> host_wait_ops;
  std::vector<std::pair<std::string, double>> sync_ops;
  // The same for dependency waits: the call or op that held the queued work ("" = not shown).
  std::vector<std::pair<std::string, double>> dependency_ops;
  std::vector<RankMetrics> ranks;
  // Each collective split into the others' wait for the last rank and the transfer
  // (collective_split.h); nullopt with one rank or no matched collective.
  std::optional<CollectiveSplit> collectives;
  Spread comm_ms;                         // per step: union of collective intervals
  Spread exposed_comm_ms;                 // per step: comm not overlapped by compute
  Spread data_wait_ms;                    // per step: the data-wait part of the breakdown
  std::optional<double> hidden_fraction;  // 1 - sum(exposed) / sum(comm); nullopt without comm
  std::optional<double> busbw_gbps;       // bytes-weighted mean busbw of all collectives
  int64_t grad_bytes_per_step = 0;        // all-reduce + reduce-scatter payload per step (median)
  int64_t comm_bytes_per_step = 0;        // all collectives' payload per step (median)
  double bus_bytes_per_step = 0;          // sum of bytes * nccl-tests factor per step (median)
  std::optional<double> comm_floor_ms;    // bus_bytes_per_step / busbw

  int64_t peak_bytes = 0;               // max over ranks of peak allocated
  int64_t alloc_retries = 0;            // max over ranks (the allocator's cumulative count)
  std::optional<double> peak_fraction;  // peak_bytes / device_memory_bytes
  std::optional<double> gpu_util_pct;   // mean NVML utilisation during measured steps
  // The ranks' processes, from /proc (every run samples them; a CPU run has nothing else): the
  // sum over ranks of each one's mean CPU use during measured steps (100 = one core busy), and the
  // largest resident memory any rank reported.
  std::optional<double> cpu_use_pct;
  int64_t rss_peak_bytes = 0;
  int ranks_per_host = 0;  // the most ranks whose hello named the same host (0: no hello)
  // What the hardware says over the measured steps (the first repeat's): energy from NVML's
  // counter (metrics/energy.h) and GPM activity (metrics/gpu_counters.h); where a figure is
  // missing, the reason.
  std::optional<double> joules_per_step;      // all GPUs, per optimizer step
  std::optional<double> tokens_per_joule;     // all ranks' tokens over all GPUs' energy
  double energy_error_bound = 0.0;            // relative, from the counter's update period
  std::string energy_problem;
  std::optional<double> sm_activity_pct;      // mean share of time the SMs were busy
  std::optional<double> tensor_activity_pct;  // mean share of time any tensor pipe was active
  std::string activity_problem;

  std::vector<std::string> errors;   // "kind: message" of every error event
  bool oom = false;                  // an error of kind "oom" arrived
  int64_t representative_step = -1;  // measured step whose time is closest to the median
  std::vector<std::string> notes;    // caveats about the data (no intervals, missing ranks)

  // True when any measured step had collective time.
  bool has_comm() const { return comm_ms.n > 0 && comm_ms.max > 0; }
  // True when there is a config and it knows every one of `keys`.
  bool knows(std::initializer_list<std::string_view> keys) const;
};

// Per-step breakdowns of one rank's measured steps, in step order (for per-step bars and timelines).
struct StepBreakdown {
  int64_t step = 0;
  PhaseBreakdown breakdown;
};
std::vector<StepBreakdown> rank_breakdowns(const protocol::TrialLog& log, int rank);

// The environment switches (TUNEBENCH_*; core/engine/switches.h) the ranks' hellos recorded in
// their `env`, name -> value: what changed how the trial ran beside its config.
std::map<std::string, std::string> environment_switches(const protocol::TrialLog& log);

TrialMetrics analyze(const protocol::TrialLog& log);

// A trial's work per step and throughput in the unit it counts: tokens when they are known, else
// samples (a model counted in samples: samples_per_step, throughput.h), else tokens with nothing
// (unknown). The rule for one trial, or the arms of one plan (investigate, autotune), which share
// their program; two trials side by side compare in a unit both count (compare.cpp).
struct WorkRate {
  double per_step = 0;
  Spread total;
  Spread per_gpu;
  const char* unit = "tokens";
};
WorkRate work_rate(const TrialMetrics& m);
// Repeats of one configuration pooled: their measured steps form one population.
TrialMetrics analyze_pooled(const std::vector<const protocol::TrialLog*>& repeats);

// Scaling efficiency: tokens/s per GPU of `trial` over tokens/s per GPU of `single` (medians);
// nullopt when both have the same world size (no scaling between them) or either lacks throughput.
std::optional<double> scaling_efficiency(const TrialMetrics& trial, const TrialMetrics& single);

}  // namespace tunebench::analysis
