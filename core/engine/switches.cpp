#include "core/engine/switches.h"

#include <cstdlib>

namespace tunebench::engine {

const std::vector<std::string>& switch_names() {
  static const std::vector<std::string> names = {"TUNEBENCH_ADAMW", "TUNEBENCH_GEMM", "TUNEBENCH_GEMM_LOG",
                                                 "TUNEBENCH_MEMORY_PHASES", "TUNEBENCH_SAMPLER_DUMP",
                                                 "TUNEBENCH_MEMORY_SNAPSHOT"};
  return names;
}

Switches read_switches(const char* (*getenv_fn)(const char*)) {
  const auto get = [&](const std::string& name) -> const char* {
    return getenv_fn ? getenv_fn(name.c_str()) : std::getenv(name.c_str());
  };
  Switches s;
  for (const auto& name : switch_names())
    if (const char* v = get(name)) s.set[name] = v;
  const auto value = [&](const char* name) {
    const auto it = s.set.find(name);
    return it == s.set.end() ? std::string() : it->second;
  };
  s.torch_adamw = value("TUNEBENCH_ADAMW") == "torch";
  s.gemm_search = value("TUNEBENCH_GEMM") != "cublas";
  s.gemm_log = s.set.count("TUNEBENCH_GEMM_LOG") > 0;
  s.memory_phases = value("TUNEBENCH_MEMORY_PHASES") == "1";
  s.sampler_dump = value("TUNEBENCH_SAMPLER_DUMP");
  s.memory_snapshot = value("TUNEBENCH_MEMORY_SNAPSHOT");
  return s;
}

}  // namespace tunebench::engine
