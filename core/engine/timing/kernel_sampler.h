// Kernel sampling: the device's own kernel, memcpy and memset intervals on chosen steps.
//
// The CUDA events of the timeline bracket phases; they cannot say whether the GPU ran anything
// in between (a forward of 2 ms may hold 0.3 ms of kernels). On a sampled step this records
// what the device did: the host's ops through libtorch's Kineto profiler (profiler_kineto.h), the
// device's records and the CUDA API calls through CUPTI's activity API (cupti_activity.h). Then
// metrics::summarise_gpu_activity turns them into GPU busy and the classified GPU-idle gaps, the
// same function the trace import uses. begin() and finish() run outside the step's clock.
//
// What sampling costs the other steps: CUPTI, once attached, stays attached, and every launch pays
// for it. A host-bound step pays in full (a launch-bound run's unsampled steps were 41 % slower on
// an H200), a GPU-bound one not at all (0.1 % at 7B): the host is ahead of the GPU. So after a
// sample that shows the GPU idle at least rules::kIdleShare of the step, CUPTI is detached; the
// next sample attaches it again, and its step pays each kernel's first-launch set-up (more host
// wait in that sampled step, none in the others). A GPU-bound run keeps CUPTI attached, so its
// samples stay exact. CUDA-graph trials (few launches, and CUPTI's own records showed no kernels
// of graphs captured before it attached) and builds without CUPTI record the device via Kineto.
//
// Clock: a few user scopes recorded right after the profiler starts, each with the host clock read
// on both sides, map the profiler's timestamps onto protocol::now_us() (the tightest bracket wins).
// A build whose profiler records no GPU activity (no Kineto or no CUPTI) says so once in
// problem(); the trainer reports it and stops sampling, and its steps stay unsampled.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics/gpu_activity.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

class KernelSampler {
 public:
  // `cuda`: the device is a GPU (otherwise only CPU ops are recorded, for the tests).
  // `cuda_graphs`: the trial replays CUDA graphs (the device is then recorded through Kineto).
  // `dump_path` (TUNEBENCH_SAMPLER_DUMP, core/engine/switches.h): where each sample's raw records
  // are appended; empty: nowhere.
  explicit KernelSampler(bool cuda, bool cuda_graphs = false, std::string dump_path = {});
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

  // The profiler-to-host clock offset (ns to add to a profiler time): `brackets` are host readings
  // around each calibration scope, `scopes` the profiler's start and end of each, in the same order.
  // The scope with the narrowest bracket decides, midpoint against midpoint; 0 without scopes.
  static int64_t clock_offset_ns(const std::vector<std::pair<int64_t, int64_t>>& brackets,
                                 const std::vector<std::pair<int64_t, int64_t>>& scopes);

  bool active() const { return m_active; }
  // Where the device's records come from, for the trial's log.
  std::string source() const;
  const std::string& problem() const { return m_problem; }

 private:
  // One record of either source, on the host clock, before classification.
  struct Raw {
    enum Kind { Kernel, Memcpy, Memset, Api, CpuOp } kind;
    int64_t start_us, end_us;
    uint64_t correlation;
    int64_t tid;
    std::string name;
  };
  metrics::StepActivity classify(std::vector<Raw> raw, metrics::StepActivity out,
                                 const std::vector<protocol::Interval>& windows);
  static void dump(const char* path, const std::vector<Raw>& raw, const metrics::StepActivity& step,
                   const std::vector<protocol::Interval>& windows);

  bool m_cuda;
  bool m_own_cupti;  // device records from cupti_activity.h (else from Kineto)
  bool m_active = false;
  std::string m_dump_path;  // Switches::sampler_dump
  // CUPTI's clock against the host's, read when the sample starts and before it stops: records map
  // linearly between the two readings (CUPTI's timestamps need not be nanoseconds of the host clock).
  int64_t m_cupti_host0_ns = 0, m_cupti_t0 = 0;
  // Host readings (ns) taken just before and just after each calibration scope.
  std::vector<std::pair<int64_t, int64_t>> m_clock_brackets = std::vector<std::pair<int64_t, int64_t>>(5);
  std::string m_problem;
};

}  // namespace tunebench::engine
