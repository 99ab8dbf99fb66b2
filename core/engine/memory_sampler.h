// Memory by category on the worker (diagnostics): on memory-sampled steps, the CUDA caching
// allocator's snapshot (segments and blocks; no allocation history, no stack traces) at the end of
// the last micro-step's forward and backward, with the tensors the trainer knows, attributed by
// metrics::attribute_memory; and, with libtorch 2.x, the allocator's state at an out-of-memory
// moment, kept until the worker reports the error.
//
// Which blocks are the step's and the forward's is told by their addresses: the live blocks at the
// step's start and at the forward's start are remembered, and a live block at a snapshot whose
// address was not live then was allocated since. A block freed and allocated again at the same
// address in between counts as older (unattributed rather than a temporary or an activation).
// The same steps' memory timeline: at each phase boundary (the last micro-step's forward start and
// end, its backward end, the optimizer's start and end) the allocator's counters are read and its
// peaks reset, so each phase's peak is its own; the run's peak is carried over the resets
// (carried_peak). TUNEBENCH_MEMORY_PHASES reads the same boundaries on every step (every
// micro-step) and logs each phase's peak: one mechanism for both.
//
// An unsampled step costs one integer store per phase boundary (no allocator read, no reset). The
// CPU (and any build without CUDA) has no caching allocator: available() is false and the trainer
// says so once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <ATen/ATen.h>

#include "core/engine/device.h"
#include "core/metrics/memory_categories.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

// The tensors the trainer holds, by what they are (their storages' address ranges are used).
struct KnownTensors {
  std::vector<at::Tensor> parameters;
  std::vector<at::Tensor> gradients;
  std::vector<at::Tensor> optimizer_state;
  std::vector<at::Tensor> communication;
};

// The allocator's state when an allocation failed (libtorch 2.x CUDA builds).
struct OomRecord {
  protocol::MemoryCategories categories;  // phase: the phase that was running
  int64_t step = -1;
  int64_t requested_bytes = 0;    // what the failed allocation asked for
  int64_t device_total_bytes = 0;
  int64_t device_free_bytes = 0;
  std::vector<std::pair<int64_t, std::string>> largest_blocks;  // bytes, category: the 16 largest held
  metrics::AllocatorSnapshot snapshot;
  std::string problem;  // the snapshot could not be attributed, and why
};

class MemorySampler {
 public:
  // `known` is called at each snapshot (and at an out-of-memory moment, on the thread that
  // allocated): it must only read. `log_phases` (TUNEBENCH_MEMORY_PHASES): every step's phase
  // boundaries are read, and take_phase_log() says each phase's peak.
  MemorySampler(const DeviceContext& device, std::function<KnownTensors()> known, bool log_phases = false);
  ~MemorySampler();
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;

  // Whether this build and device have a caching allocator to read (CUDA builds on a GPU).
  bool available() const { return m_available; }

  // Phase boundaries, called on every step; they read the allocator only while sampling (and, on
  // the first step, to tell an out-of-memory's blocks apart). `eager`: false for a replayed or
  // captured CUDA graph, where nothing is read.
  void begin_step(int64_t step, bool sample, bool eager = true);
  void begin_forward(bool last_micro_step);
  void end_forward(bool last_micro_step);
  void end_backward(bool last_micro_step);
  void begin_optimizer();
  void end_optimizer();
  // The categories of the larger of the step's snapshots (none when the step was not sampled, or
  // the snapshot could not be attributed: problem() says why). Ends the step's sampling.
  std::optional<protocol::MemoryCategories> finish_step();
  const std::string& problem() const { return m_problem; }
  // The snapshot finish_step's categories came from (for TUNEBENCH_MEMORY_SNAPSHOT).
  const metrics::AllocatorSnapshot& last_snapshot() const { return m_chosen; }
  // The allocator's counters read right after that snapshot.
  const protocol::MemoryStats& last_counters() const { return m_chosen_counters; }

  // The memory timeline of the step begun last (sampled eager steps on CUDA; else empty), its
  // times made offsets from `step_start_us`. Taken once.
  std::vector<protocol::MemoryTimelinePoint> take_timeline(int64_t step_start_us);
  // TUNEBENCH_MEMORY_PHASES: " forward peak P then A; backward peak ...;" of the boundaries read
  // since the last call (bytes: the phase's peak allocated, then allocated at its end). Taken once.
  std::string take_phase_log();
  // The largest allocator peak before any of its resets (the phase boundaries', set_peak_aside's):
  // every step's peak_bytes and the run's are at least this.
  int64_t carried_peak() const { return m_peak_carried; }
  // Runs `work` outside the run's peak: the peak so far is carried, and the allocator's peak reset
  // after it (the GEMM search's scratch is not the trial's memory).
  void set_peak_aside(const std::function<void()>& work);

  // The out-of-memory record of this process, taken once (libtorch 2.x CUDA builds only).
  static std::optional<OomRecord> take_oom_record();

 private:
  struct Taken {
    metrics::AllocatorSnapshot snapshot;
    protocol::MemoryStats counters;
    int64_t allocated = 0;
    std::string phase;
  };
  metrics::AllocatorSnapshot read(const std::string& phase) const;
  void take(const char* phase);
  // A phase boundary: `ended` (may be none) ends and `starts` (may be none) begins. Reads the
  // allocator once and resets its peaks where the timeline is read now (`timeline`: a sampled
  // step's last micro-step) or every boundary is (log_phases); else nothing.
  void boundary(std::optional<protocol::Phase> ended, std::optional<protocol::Phase> starts, bool timeline);
  void on_out_of_memory(int64_t requested, int64_t total, int64_t free);

  const DeviceContext& m_device;
  std::function<KnownTensors()> m_known;
  bool m_available = false;
  bool m_sampling = false;
  int64_t m_step = -1;
  int64_t m_tracked_step = -2;  // the step whose older blocks m_live_at_step holds
  const char* m_phase = "setup";  // for the out-of-memory record
  std::unordered_set<uint64_t> m_live_at_step, m_live_at_forward, m_forward_blocks;
  // Inside a tracked step's forward: the blocks it allocated so far are those m_live_at_forward
  // lacks (an out-of-memory there holds activations, not temporaries).
  bool m_in_tracked_forward = false;
  std::vector<Taken> m_taken;
  metrics::AllocatorSnapshot m_chosen;
  protocol::MemoryStats m_chosen_counters;
  std::string m_problem;
  bool m_log_phases = false;
  std::string m_phase_log;
  int64_t m_peak_carried = 0;
  std::vector<protocol::MemoryTimelinePoint> m_timeline;  // offset_us: host time since the epoch until taken
};

}  // namespace tunebench::engine
