#!/usr/bin/env bash
# core/telemetry/nvml_abi.h declares NVML's types by hand (NVML is loaded with dlopen). Where a
# toolkit ships nvml.h, every struct's size and field offsets and every constant are compared with
# it at compile time. Skips (77) without nvml.h (the CUDA toolkit's nvml-dev part, e.g. the wheel
# nvidia-ml-py has none; $NVML_H or nvcc's include folder or /usr/local/cuda/include).
#   nvml_abi_test.sh ROOT CXX
set -euo pipefail
ROOT="$1"
CXX="$2"
H="${NVML_H:-}"
if [ -z "$H" ]; then
  for d in "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")/../include" /usr/local/cuda/include \
           /usr/local/cuda/targets/x86_64-linux/include /usr/include; do
    if [ -f "$d/nvml.h" ]; then H="$d/nvml.h"; break; fi
  done
fi
if [ -z "$H" ] || [ ! -f "$H" ]; then
  echo "skipped: no nvml.h (set NVML_H=...): core/telemetry/nvml_abi.h was not compared with NVML's header"
  exit 77
fi
echo "nvml.h: $H"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/abi.cpp" <<CPP
#include <cstddef>
#include "$H"
#include "core/telemetry/nvml_abi.h"
namespace ours = tunebench::telemetry::nvml_abi;
#define SAME_FIELD(T, U, f) static_assert(offsetof(T, f) == offsetof(U, f) && sizeof(T::f) == sizeof(U::f), #T "." #f)
static_assert(sizeof(ours::nvmlMemory_t) == sizeof(nvmlMemory_t));
SAME_FIELD(ours::nvmlMemory_t, nvmlMemory_t, used);
static_assert(sizeof(ours::nvmlUtilization_t) == sizeof(nvmlUtilization_t));
SAME_FIELD(ours::nvmlUtilization_t, nvmlUtilization_t, memory);
static_assert(sizeof(ours::nvmlFieldValue_t) == sizeof(nvmlFieldValue_t));
SAME_FIELD(ours::nvmlFieldValue_t, nvmlFieldValue_t, nvmlReturn);
SAME_FIELD(ours::nvmlFieldValue_t, nvmlFieldValue_t, value);
static_assert(sizeof(ours::nvmlGpmSupport_t) == sizeof(nvmlGpmSupport_t));
SAME_FIELD(ours::nvmlGpmSupport_t, nvmlGpmSupport_t, isSupportedDevice);
static_assert(sizeof(ours::nvmlGpmMetric_t) == sizeof(nvmlGpmMetric_t));
SAME_FIELD(ours::nvmlGpmMetric_t, nvmlGpmMetric_t, nvmlReturn);
SAME_FIELD(ours::nvmlGpmMetric_t, nvmlGpmMetric_t, value);
SAME_FIELD(ours::nvmlGpmMetric_t, nvmlGpmMetric_t, metricInfo);
// The request: the same head; our array holds the first kGpmRequestMetrics of nvml.h's.
SAME_FIELD(ours::nvmlGpmMetricsGet_t, nvmlGpmMetricsGet_t, numMetrics);
SAME_FIELD(ours::nvmlGpmMetricsGet_t, nvmlGpmMetricsGet_t, sample2);
static_assert(offsetof(ours::nvmlGpmMetricsGet_t, metrics) == offsetof(nvmlGpmMetricsGet_t, metrics));
static_assert(ours::kGpmRequestMetrics <= NVML_GPM_METRIC_MAX);
static_assert(ours::kSuccess == NVML_SUCCESS && ours::kErrorNotSupported == NVML_ERROR_NOT_SUPPORTED);
static_assert(ours::kErrorNoPermission == NVML_ERROR_NO_PERMISSION && ours::kErrorInUse == NVML_ERROR_IN_USE);
static_assert(ours::kErrorFunctionNotFound == NVML_ERROR_FUNCTION_NOT_FOUND);
static_assert(ours::kErrorInsufficientResources == NVML_ERROR_INSUFFICIENT_RESOURCES);
static_assert(ours::kGpmSupportVersion == NVML_GPM_SUPPORT_VERSION && ours::kGpmMetricsGetVersion == NVML_GPM_METRICS_GET_VERSION);
static_assert(ours::kGpmMetricSmUtil == NVML_GPM_METRIC_SM_UTIL && ours::kGpmMetricSmOccupancy == NVML_GPM_METRIC_SM_OCCUPANCY);
static_assert(ours::kGpmMetricAnyTensorUtil == NVML_GPM_METRIC_ANY_TENSOR_UTIL);
// The signatures resolved with dlsym.
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTotalEnergyConsumption), nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>);
static_assert(std::is_same_v<decltype(&nvmlGpmSampleGet), nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t)>);
static_assert(std::is_same_v<decltype(&nvmlGpmMetricsGet), nvmlReturn_t (*)(nvmlGpmMetricsGet_t*)>);
int main() {}
CPP
sed -i '1i #include <type_traits>' "$tmp/abi.cpp"
if "$CXX" -std=c++17 -fsyntax-only -I "$ROOT" "$tmp/abi.cpp"; then
  echo "ok: core/telemetry/nvml_abi.h matches $H"
else
  echo "FAIL: core/telemetry/nvml_abi.h differs from $H"
  exit 1
fi
