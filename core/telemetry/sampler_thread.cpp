#include "core/telemetry/sampler_thread.h"

#include <chrono>
#include <memory>
#include <string>

#include "core/telemetry/nvml.h"
#include "core/telemetry/process_sampler.h"

namespace tunebench::telemetry {

SamplerThread::SamplerThread(int gpu_index, double hz, Sink sink, Notice notice, std::string nvml_library)
    : m_sink(std::move(sink)),
      m_notice(std::move(notice)),
      m_thread([this, gpu_index, hz, library = std::move(nvml_library)] { run(gpu_index, hz, library); }) {}

SamplerThread::~SamplerThread() { stop(); }

void SamplerThread::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void SamplerThread::run(int gpu_index, double hz, const std::string& nvml_library) {
  std::unique_ptr<Nvml> nvml;
  if (gpu_index >= 0) {
    nvml = std::make_unique<Nvml>(nvml_library);
    if (!nvml->available()) nvml.reset();
  }
  ProcessSampler process;
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / (hz > 0 ? hz : 10.0)));
  bool told_gpm = false, told_energy = false;
  auto tell = [this](bool& told, const char* kind, const std::string& what, const std::string& problem) {
    if (told || problem.empty()) return;
    told = true;
    if (m_notice) m_notice(protocol::Warning{kind, what + " unavailable: " + problem});
  };
  auto next = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_stop) {
    lock.unlock();
    protocol::GpuSample s = nvml ? nvml->sample(gpu_index) : process.sample();
    if (nvml) {  // a GPU sample also carries the rank's own CPU use and RSS
      const auto p = process.sample();
      s.cpu_pct = p.cpu_pct;
      s.rss_bytes = p.rss_bytes;
      tell(told_gpm, "gpm", "SM and tensor-core activity", nvml->gpm_problem(gpu_index));
      tell(told_energy, "energy", "energy per step", nvml->energy_problem(gpu_index));
    }
    m_sink(std::move(s));
    ++m_samples;
    next += period;
    lock.lock();
    m_cv.wait_until(lock, next, [this] { return m_stop; });
  }
}

}  // namespace tunebench::telemetry
