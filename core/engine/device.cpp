#include "core/engine/device.h"

#include <unistd.h>

#include <fstream>

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "core/engine/errors.h"
#include "core/hardware/hardware.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

namespace tunebench::engine {

int64_t process_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

namespace {
int64_t g_cpu_peak_rss = 0;
}

bool DeviceContext::cuda_built() {
#ifdef TUNEBENCH_WITH_CUDA
  return true;
#else
  return false;
#endif
}

DeviceContext DeviceContext::create(config::Device preference, int local_rank) {
  const bool have_gpu = cuda_built() && torch::cuda::is_available();
  if (preference == config::Device::Cuda && !cuda_built())
    throw unsupported("this tunebench-worker was built against a libtorch without CUDA; build it against a "
                      "CUDA libtorch (see README) to run on GPUs");
  if (preference == config::Device::Cuda && !have_gpu)
    throw unsupported("device 'cuda' was asked for but no GPU is visible to this process");
  if (preference == config::Device::Cpu || !have_gpu) return DeviceContext(c10::Device(c10::kCPU));
#ifdef TUNEBENCH_WITH_CUDA
  const int count = static_cast<int>(torch::cuda::device_count());
  if (local_rank >= count)
    throw unsupported("local rank " + std::to_string(local_rank) + " needs GPU " + std::to_string(local_rank) +
                      " but only " + std::to_string(count) + " are visible");
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(local_rank));
  return DeviceContext(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(local_rank)));
#else
  (void)local_rank;
  return DeviceContext(c10::Device(c10::kCPU));
#endif
}

void DeviceContext::synchronize() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) c10::cuda::device_synchronize();
#endif
}

DeviceContext::MemoryReading DeviceContext::read_memory() const {
  MemoryReading r;
  protocol::MemoryStats& m = r.stats;
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(m_device.index());
    m.allocated_bytes = stats.allocated_bytes[0].current;  // [0] = AGGREGATE in both versions
    m.reserved_bytes = stats.reserved_bytes[0].current;
    m.peak_bytes = stats.allocated_bytes[0].peak;
    m.alloc_retries = stats.num_alloc_retries;
    r.reserved_peak_bytes = stats.reserved_bytes[0].peak;
    return r;
  }
#endif
  const int64_t rss = process_rss_bytes();
  g_cpu_peak_rss = std::max(g_cpu_peak_rss, rss);
  m.allocated_bytes = rss;
  m.reserved_bytes = rss;
  m.peak_bytes = g_cpu_peak_rss;
  r.reserved_peak_bytes = g_cpu_peak_rss;
  return r;
}

void DeviceContext::reset_peak_memory() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(m_device.index());
    return;
  }
#endif
  g_cpu_peak_rss = process_rss_bytes();
}

int64_t DeviceContext::total_memory_bytes() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) return static_cast<int64_t>(at::cuda::getDeviceProperties(m_device.index())->totalGlobalMem);
#endif
  return static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

int64_t DeviceContext::free_memory_bytes() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) {
    size_t free = 0, total = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));  // the current device: this rank's (create())
    return static_cast<int64_t>(free);
  }
#endif
  return -1;
}

std::string DeviceContext::name() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (is_cuda()) return at::cuda::getDeviceProperties(m_device.index())->name;
#endif
  return "cpu";
}

std::string DeviceContext::cuda_version() const {
#ifdef TUNEBENCH_WITH_CUDA
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
#else
  return {};
#endif
}

std::string DeviceContext::cudnn_version() const {
#ifdef TUNEBENCH_WITH_CUDA
  if (at::globalContext().hasCuDNN()) {
    const long v = at::detail::getCUDAHooks().versionCuDNN();
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  }
#endif
  return {};
}

double DeviceContext::peak_flops() const { return hardware::mfu_peak_tflops(name()).value_or(0.0) * 1e12; }

}  // namespace tunebench::engine
