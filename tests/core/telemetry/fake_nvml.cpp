// A stand-in for libnvidia-ml.so.1: the entry points telemetry/nvml.cpp resolves, with the
// behaviour the test picks through FAKE_NVML_MODE (read on every call):
//   gpm-ok                 a Hopper-like GPU: GPM reads SM 55 %, occupancy 33 %, tensor 22 %
//   gpm-unsupported        an older GPU: nvmlGpmQueryDeviceSupport says isSupportedDevice = 0
//   gpm-no-permission      nvmlGpmSampleGet answers NVML_ERROR_NO_PERMISSION
//   gpm-in-use             nvmlGpmSampleGet answers NVML_ERROR_IN_USE (DCGM holds the counters)
//   no-energy              nvmlDeviceGetTotalEnergyConsumption answers NVML_ERROR_NOT_SUPPORTED
// The energy counter advances 1000 mJ per read. Built twice: with FAKE_NVML_NO_GPM the GPM symbols
// are absent, as in a driver older than CUDA 12's.
#include <cstdlib>
#include <cstring>

#include "core/telemetry/nvml_abi.h"

using namespace tunebench::telemetry::nvml_abi;

namespace {
bool mode(const char* m) {
  const char* v = std::getenv("FAKE_NVML_MODE");
  return v && std::strcmp(v, m) == 0;
}
nvmlDevice_st* const kDevice = reinterpret_cast<nvmlDevice_st*>(0x1000);
unsigned long long g_energy_mj = 5'000'000;
int g_samples = 0;
}  // namespace

extern "C" {
nvmlReturn_t nvmlInit_v2() { return kSuccess; }
nvmlReturn_t nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case kErrorNotSupported: return "Not Supported";
    case kErrorNoPermission: return "Insufficient Permissions";
    case kErrorInUse: return "In use by another client";
    default: return "Unknown Error";
  }
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 1;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i != 0) return 2;
  *d = kDevice;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long* mj) {
  if (mode("no-energy")) return kErrorNotSupported;
  g_energy_mj += 1000;
  *mj = g_energy_mj;
  return kSuccess;
}
#ifndef FAKE_NVML_NO_GPM
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t, nvmlGpmSupport_t* s) {
  if (s->version != kGpmSupportVersion) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  s->isSupportedDevice = mode("gpm-unsupported") ? 0 : 1;
  return kSuccess;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  *s = reinterpret_cast<nvmlGpmSample_t>(std::malloc(64));
  return kSuccess;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  std::free(s);
  return kSuccess;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t, nvmlGpmSample_t s) {
  if (mode("gpm-no-permission")) return kErrorNoPermission;
  if (mode("gpm-in-use")) return kErrorInUse;
  std::memcpy(s, &++g_samples, sizeof g_samples);
  return kSuccess;
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* r) {
  if (r->version != kGpmMetricsGetVersion || r->numMetrics > kGpmRequestMetrics) return 25;
  int a = 0, b = 0;
  std::memcpy(&a, r->sample1, sizeof a);
  std::memcpy(&b, r->sample2, sizeof b);
  if (b != a + 1) return 2;  // not consecutive samples: NVML_ERROR_INVALID_ARGUMENT
  for (unsigned i = 0; i < r->numMetrics; ++i) {
    auto& m = r->metrics[i];
    m.nvmlReturn = kSuccess;
    m.value = m.metricId == kGpmMetricSmUtil ? 55.0 : m.metricId == kGpmMetricSmOccupancy ? 33.0
            : m.metricId == kGpmMetricAnyTensorUtil ? 22.0 : -1.0;
    if (m.value < 0) m.nvmlReturn = kErrorNotSupported;
  }
  return kSuccess;
}
#endif
}
