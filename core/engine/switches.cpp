#include "core/engine/switches.h"

#include <cmath>
#include <cstdlib>

namespace tunebench::engine {

const std::vector<std::string>& switch_names() {
  static const std::vector<std::string> names = {"TUNEBENCH_ADAMW", "TUNEBENCH_GEMM", "TUNEBENCH_GEMM_LOG",
                                                 "TUNEBENCH_MEMORY_PHASES", "TUNEBENCH_SAMPLER_DUMP",
                                                 "TUNEBENCH_MEMORY_SNAPSHOT", "TUNEBENCH_COLLECTIVE_DELAY"};
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
  if (const auto it = s.set.find("TUNEBENCH_COLLECTIVE_DELAY"); it != s.set.end()) {
    const std::string& v = it->second;
    const size_t colon = v.find(':');
    char* end = nullptr;
    const long rank = colon == std::string::npos ? -1 : std::strtol(v.c_str(), &end, 10);
    const bool rank_ok = colon != std::string::npos && end == v.c_str() + colon && colon > 0 && rank >= 0 && rank < 1024;
    const double ms = rank_ok ? std::strtod(v.c_str() + colon + 1, &end) : -1.0;
    if (rank_ok && end != v.c_str() + colon + 1 && *end == '\0' && std::isfinite(ms) && ms >= 0 && ms <= 60'000) {
      s.collective_delay_rank = static_cast<int>(rank);
      s.collective_delay_ms = ms;
    } else {
      s.problems.push_back("TUNEBENCH_COLLECTIVE_DELAY=" + v +
                           ": expected RANK:MS, a rank and a delay of 0 to 60000 ms (e.g. 1:50)");
    }
  }
  return s;
}

}  // namespace tunebench::engine
