// Kernel sampling: the device's own kernel, memcpy and memset intervals on chosen steps.
//
// The CUDA events of the timeline bracket phases; they cannot say whether the GPU ran anything
// in between (a forward of 2 ms may hold 0.3 ms of kernels). On a sampled step this records
// what the device did through libtorch's Kineto profiler (profiler_kineto.h: CUPTI underneath),
// and metrics::summarise_gpu_activity turns it into GPU busy and the classified GPU-idle gaps, the
// same function the trace import uses. begin() and finish() run outside the step's clock. The
// other steps do not record, but Kineto leaves CUPTI attached to the process after the first
// profile (unless TEARDOWN_CUPTI=1): on an H200 that slowed the unsampled steps of a launch-bound
// run from 12.3 to 16-19 ms, and a GPU-bound 7B step by 0.2 % (docs/BENCHMARKS.md).
//
// Clock: one user scope recorded right after the profiler starts, with the host clock read on
// both sides, maps the profiler's timestamps onto protocol::now_us().
// A build whose profiler records no GPU activity (no Kineto or no CUPTI) says so once in
// problem(); the trainer reports it and stops sampling, and its steps stay unsampled.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/metrics/gpu_activity.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

class KernelSampler {
 public:
  // `cuda`: the device is a GPU (otherwise only CPU ops are recorded, for the tests).
  explicit KernelSampler(bool cuda);
  ~KernelSampler();
  KernelSampler(const KernelSampler&) = delete;
  KernelSampler& operator=(const KernelSampler&) = delete;

  // Starts recording, before the step's clock starts, and on a GPU runs one small kernel to a
  // synchronisation so that the profiler's first-activity set-up is paid outside the step.
  // False (and problem() set) when it cannot.
  bool begin();
  // Stops recording (after the step's synchronisation) and returns what the step's window held.
  // `windows`: the step's compute-phase windows on the host clock (Timeline::host_windows); a
  // kernel takes the phase of the innermost window its launch fell in. Empty `activities` on a
  // GPU set problem(): this build's profiler sees no GPU activity.
  metrics::StepActivity finish(int64_t start_us, int64_t end_us, const std::vector<protocol::Interval>& windows);

  // Turns a sampled step's records into the step's figures: the compute lane becomes the time
  // compute kernels ran plus the GPU-idle gaps, gpu_sampled and gpu_busy_ms are set, and the
  // communication summary is recomputed (exposed = collectives not overlapped by compute kernels).
  static void apply(protocol::Step& step, metrics::StepActivity activity, int world_size);

  bool active() const { return m_active; }
  const std::string& problem() const { return m_problem; }

 private:
  bool m_cuda;
  bool m_active = false;
  int64_t m_clock_host_us = 0;  // host time of the calibration scope
  std::string m_problem;
};

}  // namespace tunebench::engine
