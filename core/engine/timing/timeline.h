// The per-step phase timeline of one rank.
//
// Host-lane intervals are measured on the host clock. Device intervals (compute, comm) are
// CUDA events recorded on the stream that does the work, read back after the step's own
// synchronisation and mapped onto the host clock through one reference event recorded last
// (its completion is the moment the step's synchronize returned). No extra synchronisation is
// added. On the CPU every interval is measured on the host clock directly.
// Thread-safe: autograd threads record recompute and gradient-hook intervals.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::engine {

class Timeline {
 public:
  // `device_events`: use CUDA events (CUDA builds on a GPU). `enabled` = false records nothing
  // (the untimed run that measures the instrumentation's own cost).
  Timeline(bool device_events, bool enabled);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  bool enabled() const { return m_enabled; }
  // While paused nothing is recorded (during CUDA-graph capture, where events cannot time).
  void set_paused(bool paused) { m_paused = paused; }

  // An interval measured by the caller on the host clock.
  void add_host(protocol::Phase phase, int64_t start_us, int64_t end_us);

  // Opens a device interval on the current stream (or the given CUDA stream, as void*); returns a
  // handle for end(). The lane follows the phase (collectives go on comm).
  int begin(protocol::Phase phase, std::string label = {}, int64_t bytes = 0, void* stream = nullptr);
  void end(int handle, void* stream = nullptr);

  // Called right after the step's synchronisation: converts everything recorded since the last
  // collect() into host-clock intervals, sorted by start. `sync_host_us` is the host time at
  // which the synchronisation returned.
  std::vector<protocol::Interval> collect(int64_t sync_host_us);
  // Records the reference event; call just before the step's synchronisation.
  void mark_step_end();
  // The compute-lane intervals of the last collect() as the host saw them: from the begin() call
  // to the end() call on the host clock. Kernel sampling gives each kernel the phase whose host
  // window its launch fell in.
  const std::vector<protocol::Interval>& host_windows() const { return m_host_windows; }

 private:
  struct Open {
    protocol::Phase phase;
    std::string label;
    int64_t bytes;
    int begin_event = -1, end_event = -1;  // CUDA event slots
    int64_t begin_us = 0, end_us = 0;      // host clock (CPU)
    int64_t host_begin_us = 0, host_end_us = 0;  // when begin() and end() were called
    bool closed = false;
  };
  struct CudaEvents;

  bool m_device_events;
  bool m_enabled;
  bool m_paused = false;
  std::mutex m_mutex;
  std::vector<Open> m_open;
  std::vector<protocol::Interval> m_host;
  std::vector<protocol::Interval> m_host_windows;
  std::unique_ptr<CudaEvents> m_cuda;
};

// Splits compute intervals around the recompute intervals nested in them (lanes never overlap),
// and with `carve_comm` also around comm intervals (collectives that block the computing thread).
std::vector<protocol::Interval> carve_nested(std::vector<protocol::Interval> intervals, bool carve_comm = false);

}  // namespace tunebench::engine
