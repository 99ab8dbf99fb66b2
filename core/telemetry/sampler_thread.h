// A background thread that writes one telemetry sample per period: NVML for the rank's GPU, or
// /proc for CPU runs. Stops (and joins) in its destructor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/protocol/events.h"

namespace tunebench::telemetry {

class SamplerThread {
 public:
  using Sink = std::function<void(protocol::GpuSample)>;
  // gpu_index < 0 samples this process from /proc; otherwise the GPU through NVML (falling back to
  // /proc when NVML is unavailable).
  SamplerThread(int gpu_index, double hz, Sink sink);
  ~SamplerThread();
  SamplerThread(const SamplerThread&) = delete;
  SamplerThread& operator=(const SamplerThread&) = delete;

  void stop();
  int64_t samples() const { return m_samples.load(); }

 private:
  void run(int gpu_index, double hz);

  Sink m_sink;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::atomic<int64_t> m_samples{0};
  std::thread m_thread;
};

}  // namespace tunebench::telemetry
