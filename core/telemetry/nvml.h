// NVML, loaded with dlopen: GPU inventory and samples without linking the driver library.
//
// Works on machines without a GPU (available() is false and every call returns empty), so the
// GUI can use it for device detection everywhere. Only the handful of NVML entry points we use are
// declared here, with NVML's documented ABI (nvml.h, API version 2 "_v2" symbols).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::telemetry {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int64_t memory_total_bytes = 0;
  int nvlink_links_active = 0;
};

class Nvml {
 public:
  // Loads libnvidia-ml.so.1 and initialises it; never throws. `library` overrides the soname
  // (tests point it at a missing file to exercise the no-GPU path).
  explicit Nvml(const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return m_ok; }
  std::string error() const { return m_error; }  // why it is unavailable, for the log
  std::string driver_version() const;
  std::vector<GpuInfo> devices() const;
  // The interconnect in one line: active NVLink links per GPU and the PCIe relation of each pair
  // ("GPU0: 18 NVLink links; GPU0-GPU1: PCIe host bridge"); empty without NVML.
  std::string topology() const;
  // One sample of device `index`; fields NVML does not support stay empty. Throughput counters
  // (PCIe, NVLink) are rates over the time since the previous sample of the same device.
  // The sample also carries the energy counter and, on GPUs with NVML GPM (Hopper and newer), SM
  // activity, SM occupancy and tensor-core activity over the time since the previous sample of
  // the same device (the first sample has none).
  protocol::GpuSample sample(int index);
  // Why device `index`'s samples lack GPM activity, or the energy counter: empty while they are
  // read (and before its first sample). Once GPM fails on a device it is not tried again.
  std::string gpm_problem(int index) const;
  std::string energy_problem(int index) const;

 private:
  struct Api;
  std::unique_ptr<Api> m_api;
  bool m_ok = false;
  std::string m_error;
};

// Why GPM cannot be read, from an NVML return code of its calls and NVML's own words for it: not
// supported (the GPU is older than Hopper, or the driver), no permission (profiling restricted to
// administrators), counters held by another profiler (DCGM's profiling module), or another error.
std::string gpm_unavailable_reason(int nvml_return, const std::string& nvml_words);

}  // namespace tunebench::telemetry
