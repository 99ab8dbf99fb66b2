// NVML through dlopen. The declarations below follow NVML's public ABI (nvml.h); we resolve
// only the entry points we call and treat a missing one as "not supported".
#include "core/telemetry/nvml.h"

#include "core/telemetry/nvml_abi.h"

#include <dlfcn.h>

#include <chrono>
#include <climits>
#include <map>
#include <optional>
#include <utility>

namespace tunebench::telemetry {
using nvml_abi::kSuccess;
using nvml_abi::nvmlDevice_t;
using nvml_abi::nvmlFieldValue_t;
using nvml_abi::nvmlGpmMetricsGet_t;
using nvml_abi::nvmlGpmSample_t;
using nvml_abi::nvmlGpmSupport_t;
using nvml_abi::nvmlMemory_t;
using nvml_abi::nvmlReturn_t;
using nvml_abi::nvmlUtilization_t;

namespace {
constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;    // NVML_TEMPERATURE_GPU
constexpr int kPcieTx = 0;            // NVML_PCIE_UTIL_TX_BYTES
constexpr int kPcieRx = 1;            // NVML_PCIE_UTIL_RX_BYTES
constexpr unsigned kFieldNvlinkTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (KiB, cumulative)
constexpr unsigned kFieldNvlinkRx = 139;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
constexpr int kMaxNvlinks = 18;           // NVML_NVLINK_MAX_LINKS
}  // namespace

struct Nvml::Api {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // millijoules
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*gpm_sample_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_sample_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_sample_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics_get)(nvmlGpmMetricsGet_t*) = nullptr;

  // GPM metrics are rates between two samples: each device keeps its previous one.
  struct Gpm {
    bool checked = false;
    nvmlGpmSample_t previous = nullptr, current = nullptr;
    bool have_previous = false;
    std::string problem;  // non-empty: not read on this device, and why
  };
  std::map<int, Gpm> gpm;
  std::map<int, std::string> energy_problem;
  std::string words(nvmlReturn_t rc) const { return error_string ? error_string(rc) : "NVML error " + std::to_string(rc); }
  void gpm_sample(int index, nvmlDevice_t dev, protocol::GpuCounters& out);
  void free_gpm(Gpm& g) {
    if (g.previous && gpm_sample_free) gpm_sample_free(g.previous);
    if (g.current && gpm_sample_free) gpm_sample_free(g.current);
    g.previous = g.current = nullptr;
    g.have_previous = false;
  }

  struct Counter {
    unsigned long long tx_kib = 0, rx_kib = 0;
    std::chrono::steady_clock::time_point at;
    bool valid = false;
  };
  std::map<int, Counter> nvlink_last;

  template <class F> void resolve(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(::dlsym(handle, symbol));
  }
};

Nvml::Nvml(const std::string& library) : m_api(std::make_unique<Api>()) {
  Api& a = *m_api;
  a.handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!a.handle) {
    const char* err = ::dlerror();
    m_error = std::string("NVML not available (") + (err ? err : library.c_str()) + ")";
    return;
  }
  a.resolve(a.init, "nvmlInit_v2");
  a.resolve(a.shutdown, "nvmlShutdown");
  a.resolve(a.error_string, "nvmlErrorString");
  a.resolve(a.driver_version, "nvmlSystemGetDriverVersion");
  a.resolve(a.count, "nvmlDeviceGetCount_v2");
  a.resolve(a.by_index, "nvmlDeviceGetHandleByIndex_v2");
  a.resolve(a.name, "nvmlDeviceGetName");
  a.resolve(a.uuid, "nvmlDeviceGetUUID");
  a.resolve(a.memory, "nvmlDeviceGetMemoryInfo");
  a.resolve(a.utilization, "nvmlDeviceGetUtilizationRates");
  a.resolve(a.power, "nvmlDeviceGetPowerUsage");
  a.resolve(a.clock, "nvmlDeviceGetClockInfo");
  a.resolve(a.temperature, "nvmlDeviceGetTemperature");
  a.resolve(a.pcie, "nvmlDeviceGetPcieThroughput");
  a.resolve(a.nvlink_state, "nvmlDeviceGetNvLinkState");
  a.resolve(a.field_values, "nvmlDeviceGetFieldValues");
  a.resolve(a.common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  a.resolve(a.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  a.resolve(a.gpm_support, "nvmlGpmQueryDeviceSupport");
  a.resolve(a.gpm_sample_alloc, "nvmlGpmSampleAlloc");
  a.resolve(a.gpm_sample_free, "nvmlGpmSampleFree");
  a.resolve(a.gpm_sample_get, "nvmlGpmSampleGet");
  a.resolve(a.gpm_metrics_get, "nvmlGpmMetricsGet");
  if (!a.init || !a.count || !a.by_index) {
    m_error = "NVML library lacks nvmlInit_v2/nvmlDeviceGetCount_v2";
    return;
  }
  if (const nvmlReturn_t rc = a.init(); rc != kSuccess) {
    m_error = std::string("nvmlInit failed: ") + (a.error_string ? a.error_string(rc) : std::to_string(rc));
    return;
  }
  m_ok = true;
}

Nvml::~Nvml() {
  for (auto& [index, g] : m_api->gpm) m_api->free_gpm(g);
  if (m_ok && m_api->shutdown) m_api->shutdown();
  if (m_api->handle) ::dlclose(m_api->handle);
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  if (!m_ok || !m_api->driver_version || m_api->driver_version(buf, sizeof(buf)) != kSuccess) return {};
  return buf;
}

std::vector<GpuInfo> Nvml::devices() const {
  std::vector<GpuInfo> out;
  if (!m_ok) return out;
  const Api& a = *m_api;
  unsigned n = 0;
  if (a.count(&n) != kSuccess) return out;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    if (a.by_index(i, &dev) != kSuccess) continue;
    GpuInfo info;
    info.index = static_cast<int>(i);
    char buf[128] = {};
    if (a.name && a.name(dev, buf, sizeof(buf)) == kSuccess) info.name = buf;
    char ubuf[128] = {};
    if (a.uuid && a.uuid(dev, ubuf, sizeof(ubuf)) == kSuccess) info.uuid = ubuf;
    nvmlMemory_t mem{};
    if (a.memory && a.memory(dev, &mem) == kSuccess) info.memory_total_bytes = static_cast<int64_t>(mem.total);
    if (a.nvlink_state) {
      for (unsigned link = 0; link < kMaxNvlinks; ++link) {
        int active = 0;
        if (a.nvlink_state(dev, link, &active) == kSuccess && active) ++info.nvlink_links_active;
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string Nvml::topology() const {
  if (!m_ok) return {};
  const auto gpus = devices();
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  for (const auto& g : gpus) add("GPU" + std::to_string(g.index) + ": " + std::to_string(g.nvlink_links_active) + " NVLink links");
  const Api& a = *m_api;
  if (a.common_ancestor) {
    // NVML_TOPOLOGY_*: how far apart two GPUs are on PCIe.
    auto level = [](int v) -> std::string {
      switch (v) {
        case 0: return "same board";
        case 10: return "PCIe switch";
        case 20: return "PCIe switches";
        case 30: return "PCIe host bridge";
        case 40: return "PCIe same NUMA node";
        case 50: return "PCIe across NUMA nodes";
        default: return "PCIe level " + std::to_string(v);
      }
    };
    for (size_t i = 0; i < gpus.size(); ++i)
      for (size_t j = i + 1; j < gpus.size(); ++j) {
        nvmlDevice_t d1 = nullptr, d2 = nullptr;
        int lvl = 0;
        if (a.by_index(static_cast<unsigned>(gpus[i].index), &d1) == kSuccess &&
            a.by_index(static_cast<unsigned>(gpus[j].index), &d2) == kSuccess && a.common_ancestor(d1, d2, &lvl) == kSuccess)
          add("GPU" + std::to_string(gpus[i].index) + "-GPU" + std::to_string(gpus[j].index) + ": " + level(lvl));
      }
  }
  return out;
}

protocol::GpuSample Nvml::sample(int index) {
  protocol::GpuSample s;
  s.index = index;
  if (!m_ok) return s;
  Api& a = *m_api;
  nvmlDevice_t dev = nullptr;
  if (a.by_index(static_cast<unsigned>(index), &dev) != kSuccess) return s;
  nvmlUtilization_t util{};
  if (a.utilization && a.utilization(dev, &util) == kSuccess) s.util_pct = util.gpu;
  nvmlMemory_t mem{};
  if (a.memory && a.memory(dev, &mem) == kSuccess) {
    s.mem_used_bytes = static_cast<int64_t>(mem.used);
    s.mem_total_bytes = static_cast<int64_t>(mem.total);
  }
  unsigned v = 0;
  if (a.power && a.power(dev, &v) == kSuccess) s.power_w = v / 1000.0;
  if (a.clock && a.clock(dev, kClockSm, &v) == kSuccess) s.sm_clock_mhz = v;
  if (a.temperature && a.temperature(dev, kTemperatureGpu, &v) == kSuccess) s.temperature_c = v;
  // PCIe throughput is NVML's own 20 ms window, in KB/s.
  if (a.pcie && a.pcie(dev, kPcieTx, &v) == kSuccess) s.pcie_tx_mbps = v / 1000.0;
  if (a.pcie && a.pcie(dev, kPcieRx, &v) == kSuccess) s.pcie_rx_mbps = v / 1000.0;
  if (a.field_values) {
    nvmlFieldValue_t f[2] = {};
    f[0].fieldId = kFieldNvlinkTx;
    f[0].scopeId = UINT_MAX;  // all links
    f[1].fieldId = kFieldNvlinkRx;
    f[1].scopeId = UINT_MAX;
    if (a.field_values(dev, 2, f) == kSuccess && f[0].nvmlReturn == kSuccess && f[1].nvmlReturn == kSuccess) {
      const auto now = std::chrono::steady_clock::now();
      auto& last = a.nvlink_last[index];
      if (last.valid) {
        const double dt = std::chrono::duration<double>(now - last.at).count();
        if (dt > 0 && f[0].value.ullVal >= last.tx_kib && f[1].value.ullVal >= last.rx_kib) {
          s.nvlink_tx_mbps = (f[0].value.ullVal - last.tx_kib) * 1.024e-3 / dt;
          s.nvlink_rx_mbps = (f[1].value.ullVal - last.rx_kib) * 1.024e-3 / dt;
        }
      }
      last = {f[0].value.ullVal, f[1].value.ullVal, now, true};
    }
  }
  if (a.total_energy) {
    unsigned long long mj = 0;
    if (const nvmlReturn_t rc = a.total_energy(dev, &mj); rc == kSuccess && mj <= (1ull << 53))
      s.counters.energy_mj = static_cast<int64_t>(mj);
    else if (a.energy_problem[index].empty())
      a.energy_problem[index] = rc == kSuccess ? "the energy counter reads beyond 2^53 mJ"
                                               : "the energy counter is not read: " + a.words(rc);
  } else if (a.energy_problem[index].empty()) {
    a.energy_problem[index] = "this driver's NVML has no energy counter (nvmlDeviceGetTotalEnergyConsumption)";
  }
  a.gpm_sample(index, dev, s.counters);
  return s;
}

void Nvml::Api::gpm_sample(int index, nvmlDevice_t dev, protocol::GpuCounters& out) {
  Gpm& g = gpm[index];
  if (!g.checked) {
    g.checked = true;
    if (!gpm_support || !gpm_sample_alloc || !gpm_sample_free || !gpm_sample_get || !gpm_metrics_get) {
      g.problem = "this driver's NVML has no GPM (drivers of CUDA 12 and newer have it)";
      return;
    }
    nvmlGpmSupport_t support{nvml_abi::kGpmSupportVersion, 0};
    if (const nvmlReturn_t rc = gpm_support(dev, &support); rc != kSuccess) {
      g.problem = gpm_unavailable_reason(rc, words(rc));
      return;
    }
    if (!support.isSupportedDevice) {
      g.problem = "this GPU has no GPM counters (NVML GPM needs a Hopper or newer GPU)";
      return;
    }
    if (gpm_sample_alloc(&g.previous) != kSuccess || gpm_sample_alloc(&g.current) != kSuccess) {
      free_gpm(g);
      g.problem = "NVML could not allocate GPM samples";
      return;
    }
  }
  if (!g.problem.empty()) return;
  if (const nvmlReturn_t rc = gpm_sample_get(dev, g.current); rc != kSuccess) {
    free_gpm(g);
    g.problem = gpm_unavailable_reason(rc, words(rc));
    return;
  }
  if (g.have_previous) {
    nvmlGpmMetricsGet_t request{};
    request.version = nvml_abi::kGpmMetricsGetVersion;
    request.numMetrics = nvml_abi::kGpmRequestMetrics;
    request.sample1 = g.previous;
    request.sample2 = g.current;
    request.metrics[0].metricId = nvml_abi::kGpmMetricSmUtil;
    request.metrics[1].metricId = nvml_abi::kGpmMetricSmOccupancy;
    request.metrics[2].metricId = nvml_abi::kGpmMetricAnyTensorUtil;
    if (const nvmlReturn_t rc = gpm_metrics_get(&request); rc != kSuccess) {
      free_gpm(g);
      g.problem = gpm_unavailable_reason(rc, words(rc));
      return;
    }
    auto value = [&](int i) -> std::optional<double> {
      if (request.metrics[i].nvmlReturn != kSuccess || !(request.metrics[i].value >= 0.0 && request.metrics[i].value <= 100.0))
        return std::nullopt;
      return request.metrics[i].value;
    };
    out.sm_activity_pct = value(0);
    out.sm_occupancy_pct = value(1);
    out.tensor_activity_pct = value(2);
  }
  std::swap(g.previous, g.current);
  g.have_previous = true;
}

std::string Nvml::gpm_problem(int index) const {
  const auto it = m_api->gpm.find(index);
  if (!m_ok) return m_error;
  return it == m_api->gpm.end() ? std::string() : it->second.problem;
}

std::string Nvml::energy_problem(int index) const {
  const auto it = m_api->energy_problem.find(index);
  if (!m_ok) return m_error;
  return it == m_api->energy_problem.end() ? std::string() : it->second;
}

std::string gpm_unavailable_reason(int nvml_return, const std::string& nvml_words) {
  const std::string said = " (NVML: " + nvml_words + ")";
  switch (nvml_return) {
    case nvml_abi::kErrorNotSupported: return "this GPU or driver does not support GPM (Hopper and newer do)" + said;
    case nvml_abi::kErrorNoPermission:
      return "no permission to read the GPU's performance counters (profiling is restricted to administrators: "
             "NVreg_RestrictProfilingToAdminUsers)" + said;
    case nvml_abi::kErrorInUse:
    case nvml_abi::kErrorInsufficientResources:
      return "the performance counters are held by another profiler (DCGM's profiling module, Nsight)" + said;
    case nvml_abi::kErrorFunctionNotFound: return "this driver's NVML has no GPM" + said;
    default: return "GPM failed" + said;
  }
}

}  // namespace tunebench::telemetry
