#include "core/predict/target.h"

#include <stdexcept>

#include "core/config/script.h"

#include <unistd.h>

namespace tunebench::predict {

int64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

TargetedScenario scenario_for(config::TrialConfig c, const Target& t, const std::vector<const MeasuredTrial*>& evidence,
                              const hardware::Catalogue& cat) {
  if (config::is_script(c))
    throw std::invalid_argument(
        "predictions model the LLaMA benchmark, not your own script: run it to measure it (its trials then "
        "calibrate nothing here either)");
  TargetedScenario out;
  if (t.gpus > 0) {
    c.world_size = t.gpus;
    if (t.gpus > 1 && c.strategy == config::Strategy::Single) {
      c.strategy = config::Strategy::Ddp;
      out.notes.push_back(std::to_string(t.gpus) + " GPUs with strategy single: predicting ddp");
    }
    if (t.gpus == 1) c.strategy = config::Strategy::Single;
  }
  if (!t.gpu.empty() && c.device == config::Device::Cpu) c.device = config::Device::Cuda;
  if (!t.link.empty() && !hardware::find_link(t.link, cat))
    throw std::runtime_error("unknown link '" + t.link + "' (see --list-hardware)");
  if (!t.gpu.empty() && !hardware::find_gpu(t.gpu, cat))
    throw std::runtime_error("unknown GPU '" + t.gpu + "' (see --list-hardware)");

  Scenario& s = out.scenario;
  s.config = std::move(c);
  s.gpu = t.gpu;
  s.link = t.link;
  s.hosts = std::max(1, t.hosts);
  s.device_memory_bytes = t.memory_bytes;
  if (s.gpu.empty() && s.config.device != config::Device::Cpu) {
    for (const auto* trial : evidence)  // the machine the evidence was measured on
      if (trial->cuda) {
        s.gpu = trial->device;
        if (s.device_memory_bytes == 0) s.device_memory_bytes = trial->device_memory_bytes;
        break;
      }
    if (s.gpu.empty())
      throw std::runtime_error("which GPU? Give --gpu ID (see --list-hardware) or --evidence with trials measured on it");
  }
  if (s.config.device == config::Device::Cpu && s.device_memory_bytes == 0) s.device_memory_bytes = host_memory_bytes();
  return out;
}

}  // namespace tunebench::predict
