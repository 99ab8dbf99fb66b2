// Kernel-sampled steps of a script trial (docs/SCRIPTS.md, "Kernel-sampled steps").
//
// tunebench_probe runs torch.profiler around the trial's sampled steps (the worker's schedule,
// TrialConfig::kernel_sampled) and names the window's trace in those steps' events
// (Step::kernel_trace). Both runners (the GUI's TrialRunner and the headless run_trial) pass every
// event through KernelTraces before it is shown or stored. It reads each trace once with the trace
// import (import::read_torch_trace: StepBuilder and metrics::summarise_gpu_activity, exactly as an
// imported trace) and gives each sampled step the imported step's GPU figures, as the worker's
// KernelSampler::apply does for its own samples: gpu_sampled, gpu_busy_ms and a compute lane of the
// time compute kernels ran (by phase) plus the classified GPU-idle gaps (host_wait with the host
// op, launch_gap, sync_wait with the op that synchronised), clipped to the probe's step window. The
// probe's host lane (data wait, copies) and comm lane (DDP buckets) stay; exposed communication is
// recomputed against the new compute lane.
//
// A trace in the trial's own folder (the local ranks write beside their config) is removed once its
// window is over (the rank's next step names another trace or none), so a long run keeps one trace
// per rank, not one per window. Traces elsewhere (--trace-dir, SLURM's shared folder) stay.
//
// A trace that cannot be used leaves its steps as the probe measured them (gpu_sampled false: GPU
// busy unavailable) and gives the rank one warning event that says why: a CPU run (no GPU kernels),
// a trace not on this machine (ranks over SSH), a bad file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/protocol/events.h"

namespace tunebench::launch {

class KernelTraces {
 public:
  // `own_dir`: the trial's private folder (TrialDir); empty: no trace is removed.
  explicit KernelTraces(std::string own_dir = {}) : m_own_dir(std::move(own_dir)) {}
  ~KernelTraces();
  KernelTraces(const KernelTraces&) = delete;
  KernelTraces& operator=(const KernelTraces&) = delete;

  // Folds in the trace a step event names and clears Step::kernel_trace; other events pass (a
  // hello tells the rank's device). Returns a warning event to record after it, at most one per
  // rank.
  std::optional<protocol::Event> apply(protocol::Event& event);

 private:
  struct Trace {
    std::string path;
    std::map<int64_t, protocol::Step> steps;  // by ProfilerStep number: the probe's step index
    std::string error;                        // why it cannot be used; empty when read
  };
  const Trace& read(int rank, const std::string& path);
  void done_with(Trace& trace);  // the window is over: forgotten, and removed when in own_dir

  std::string m_own_dir;

  std::map<int, Trace> m_last;         // by rank: the last trace read (a window's steps share it)
  std::map<int, std::string> m_device;  // by rank: the hello's device_kind
  std::set<int> m_warned;
};

// Gives `step` the GPU figures of `sampled`, the same step read from its trace (see above).
void fold_kernel_sample(protocol::Step& step, const protocol::Step& sampled);

// GPU busy of the probe's step [start_us, end_us] from its trace's step `sampled`: the probe's
// window and the trace's ProfilerStep span need not coincide (they did not in a window's first
// step on an H100: up to 4.4 points apart when the ProfilerStep's busy time was divided by the
// probe's step time), so the busy fraction is read over the part both cover and given over the
// probe's step time `step_ms` (a part the trace does not cover is taken to be as busy as the rest).
double busy_ms_in_window(const protocol::Step& sampled, int64_t start_us, int64_t end_us, double step_ms);

}  // namespace tunebench::launch
