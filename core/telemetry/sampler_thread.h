// A background thread that writes one telemetry sample per period: NVML for the rank's GPU, or
// /proc for CPU runs. Stops (and joins) in its destructor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/protocol/events.h"

namespace tunebench::telemetry {

class SamplerThread {
 public:
  using Sink = std::function<void(protocol::GpuSample)>;
  // Once per kind, what the GPU samples will lack and why: `gpm` (SM and tensor-core activity) and
  // `energy` (the energy counter). Called on the sampler's thread.
  using Notice = std::function<void(protocol::Warning)>;
  // gpu_index < 0 samples this process from /proc; otherwise the GPU through NVML (falling back to
  // /proc when NVML is unavailable). `nvml_library`: Nvml's soname (tests pass a stand-in).
  SamplerThread(int gpu_index, double hz, Sink sink, Notice notice = {},
                std::string nvml_library = "libnvidia-ml.so.1");
  ~SamplerThread();
  SamplerThread(const SamplerThread&) = delete;
  SamplerThread& operator=(const SamplerThread&) = delete;

  void stop();
  int64_t samples() const { return m_samples.load(); }

 private:
  void run(int gpu_index, double hz, const std::string& nvml_library);

  Sink m_sink;
  Notice m_notice;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::atomic<int64_t> m_samples{0};
  std::thread m_thread;
};

}  // namespace tunebench::telemetry
