// NVML's types and constants as nvml.h declares them, for the entry points core/telemetry/nvml.cpp
// resolves with dlsym: the build needs neither the driver nor the toolkit's nvml.h. The test
// `cuda.nvml_abi_matches_nvml_h` (tests/cuda) compares every struct's size and field offsets and
// every constant here with nvml.h where a toolkit provides it.
//
// Named, not anonymous: Nvml::Api (external linkage) holds these types.
#pragma once

namespace tunebench::telemetry::nvml_abi {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlGpmSample_t = struct nvmlGpmSample_st*;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
  } value;
};

// ---- GPM (GPU performance monitoring, Hopper and newer; NVML of CUDA 12 and newer) --------------
struct nvmlGpmSupport_t {
  unsigned int version;            // in: kGpmSupportVersion
  unsigned int isSupportedDevice;  // out
};
struct nvmlGpmMetric_t {
  unsigned int metricId;  // in: an NVML_GPM_METRIC_* id
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
// nvml.h sizes `metrics` by NVML_GPM_METRIC_MAX, which grows between releases; the library reads
// and writes only the first numMetrics entries, so a request for a few needs only that many.
inline constexpr int kGpmRequestMetrics = 3;
struct nvmlGpmMetricsGet_t {
  unsigned int version;  // in: kGpmMetricsGetVersion
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmRequestMetrics];
};

inline constexpr nvmlReturn_t kSuccess = 0;                   // NVML_SUCCESS
inline constexpr nvmlReturn_t kErrorNotSupported = 3;         // NVML_ERROR_NOT_SUPPORTED
inline constexpr nvmlReturn_t kErrorNoPermission = 4;         // NVML_ERROR_NO_PERMISSION
inline constexpr nvmlReturn_t kErrorFunctionNotFound = 13;    // NVML_ERROR_FUNCTION_NOT_FOUND
inline constexpr nvmlReturn_t kErrorInUse = 19;               // NVML_ERROR_IN_USE
inline constexpr nvmlReturn_t kErrorInsufficientResources = 23;  // NVML_ERROR_INSUFFICIENT_RESOURCES
inline constexpr unsigned kGpmSupportVersion = 1;             // NVML_GPM_SUPPORT_VERSION
inline constexpr unsigned kGpmMetricsGetVersion = 1;          // NVML_GPM_METRICS_GET_VERSION
inline constexpr unsigned kGpmMetricSmUtil = 2;               // NVML_GPM_METRIC_SM_UTIL
inline constexpr unsigned kGpmMetricSmOccupancy = 3;          // NVML_GPM_METRIC_SM_OCCUPANCY
inline constexpr unsigned kGpmMetricAnyTensorUtil = 5;        // NVML_GPM_METRIC_ANY_TENSOR_UTIL

}  // namespace tunebench::telemetry::nvml_abi
