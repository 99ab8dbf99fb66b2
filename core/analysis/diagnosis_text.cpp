#include "core/analysis/diagnosis_text.h"

#include <cmath>

#include "core/analysis/format.h"

namespace tunebench::analysis {

std::string collective_name(const TrialMetrics& m) {
  if (!m.knows({"strategy"})) return "communication";
  switch (m.config->strategy) {
    case config::Strategy::Ddp:
      return "all-reduce";
    case config::Strategy::Fsdp:
      return "all-gather/reduce-scatter";
    default:
      return "communication";
  }
}

std::string gradient_dtype(const TrialMetrics& m) {
  if (m.parameters <= 0 || m.grad_bytes_per_step <= 0) return "";
  // DDP all-reduces every gradient once per step; FSDP's reduce-scatter "size" is the full buffer too.
  const double per_param = static_cast<double>(m.grad_bytes_per_step) / static_cast<double>(m.parameters);
  if (std::abs(per_param - 4.0) < 0.5) return "fp32";
  if (std::abs(per_param - 2.0) < 0.3) {
    if (m.knows({"compression"}) && m.config->compression == config::Compression::Fp16) return "fp16";
    if (m.knows({"compression"}) && m.config->compression == config::Compression::Bf16) return "bf16";
    if (m.knows({"amp"}) && m.config->amp == config::Amp::PureBf16) return "bf16";
    if (m.knows({"strategy", "fsdp_reduce_dtype"}) && m.config->strategy == config::Strategy::Fsdp)
      return std::string(config::to_string(m.config->fsdp_reduce_dtype));
    return "16-bit";
  }
  return "";
}

std::string comm_clause(const TrialMetrics& m) {
  std::string s;
  if (m.grad_bytes_per_step > 0) {
    const std::string dtype = gradient_dtype(m);
    s += format_gb(static_cast<double>(m.grad_bytes_per_step)) + " of " + (dtype.empty() ? "" : dtype + " ") +
         "gradients";
  } else if (m.comm_bytes_per_step > 0) {
    s += format_gb(static_cast<double>(m.comm_bytes_per_step));
  }
  if (m.busbw_gbps) s += (s.empty() ? "" : " ") + std::string("at ") + format_gbps(*m.busbw_gbps);
  if (m.hidden_fraction)
    s += (s.empty() ? "" : ", ") + format_pct(*m.hidden_fraction) + " hidden behind " +
         (m.knows({"strategy"}) && m.config->strategy == config::Strategy::Fsdp ? "compute" : "backward");
  return s;
}

std::string floor_clause(const TrialMetrics& m) {
  if (!m.comm_floor_ms || !m.busbw_gbps) return "";
  std::string s = format_gb(m.bus_bytes_per_step) + " on the bus";
  if (m.knows({"strategy"}) && m.config->strategy == config::Strategy::Ddp && m.grad_bytes_per_step > 0)
    s = format_gb(static_cast<double>(m.grad_bytes_per_step)) + " x 2(n-1)/n (n = " + std::to_string(m.world_size) +
        ") = " + s;
  return s + " at " + format_gbps(*m.busbw_gbps) + " = " + format_ms(*m.comm_floor_ms);
}

bool on_gpu(const TrialMetrics& m) {
  if (m.config && m.config->device == config::Device::Cpu) return false;
  if (m.device.empty()) return m.config && m.config->device == config::Device::Cuda;
  return m.device != "cpu";
}

std::string device_noun(const TrialMetrics& m, bool plural) {
  return config::device_noun(on_gpu(m), plural);
}

std::string devices_text(const TrialMetrics& m) {
  if (!on_gpu(m) && (!m.device.empty() || m.config)) return std::to_string(m.world_size) + " " + device_noun(m, m.world_size != 1);
  return std::to_string(m.world_size) + " × " + (m.device.empty() ? std::string("unknown device") : m.device);
}

}  // namespace tunebench::analysis
