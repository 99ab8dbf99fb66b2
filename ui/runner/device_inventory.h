// What this machine can run: GPUs through NVML (dlopen, works without a driver), else the CPU.
#pragma once

#include <vector>

#include <QString>
#include <QVector>

#include "core/config/trial_config.h"

namespace tunebench::ui {

struct GpuDevice {
  int index = 0;
  QString name;
  qint64 memory_bytes = 0;
};

struct DeviceInventory {
  QVector<GpuDevice> gpus;
  QString cpu_name;  // from /proc/cpuinfo
  int cpu_cores = 1;
  QString nvml_error;  // why no GPU was found, for the log

  bool hasGpu() const { return !gpus.isEmpty(); }
  // Ranks the machine can hold: one per GPU, or a few Gloo ranks on the CPU.
  int maxWorldSize(bool cudaDevice) const { return cudaDevice ? int(gpus.size()) : kMaxCpuRanks; }
  QString summary() const;  // "2 x NVIDIA H200 (140.0 GiB)" or "CPU: AMD EPYC ... (16 cores)"

  static constexpr int kMaxCpuRanks = 8;
};

DeviceInventory detect_devices();

// What keeps `config` from running on `devices` (a CUDA trial without a GPU, more ranks than
// GPUs or than the CPU's Gloo limit), keyed by knob. The form and every other way to start a
// trial (follow-ups, sweeps, run again) ask this same function.
std::vector<config::Problem> device_problems(const config::TrialConfig& config, const DeviceInventory& devices);

}  // namespace tunebench::ui
