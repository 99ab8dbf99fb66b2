// The device a rank trains on: CUDA (one GPU per rank, by LOCAL_RANK) or the CPU.
// Hides every CUDA call behind a small interface so the training loop reads the same on both.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

#include "core/config/trial_config.h"
#include "core/protocol/events.h"

namespace tunebench::engine {

class DeviceContext {
 public:
  // Picks the device for `preference`; throws EngineError(unsupported) when CUDA is asked for
  // but this build has no CUDA or no GPU is visible.
  static DeviceContext create(config::Device preference, int local_rank);

  bool is_cuda() const { return m_device.is_cuda(); }
  c10::Device device() const { return m_device; }
  // Blocks until all work queued on this device is done (no-op on CPU).
  void synchronize() const;
  // The caching allocator's counters now (CPU: the resident set, and its peak since the last reset).
  protocol::MemoryStats memory() const { return read_memory().stats; }
  // memory(), with the reserve's peak since the last reset_peak_memory() beside it (one reading).
  struct MemoryReading {
    protocol::MemoryStats stats;
    int64_t reserved_peak_bytes = 0;
  };
  MemoryReading read_memory() const;
  // Resets the allocator's peaks (allocated and reserved) to what is held now.
  void reset_peak_memory() const;
  int64_t total_memory_bytes() const;
  // The device's memory nothing holds now (cudaMemGetInfo's free: the caching allocator's reserve
  // is held); -1 on the CPU (unknown).
  int64_t free_memory_bytes() const;
  std::string name() const;
  // Versions for the hello event ("" where not applicable).
  std::string cuda_version() const;
  std::string cudnn_version() const;
  // Peak dense bf16 FLOP/s of this device by name; 0 when unknown (then no MFU is reported).
  double peak_flops() const;

  static bool cuda_built();

 private:
  explicit DeviceContext(c10::Device device) : m_device(device) {}
  c10::Device m_device;
};

// Resident set size of this process (the CPU's "memory in use").
int64_t process_rss_bytes();

}  // namespace tunebench::engine
