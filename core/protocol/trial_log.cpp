#include "core/protocol/trial_log.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tunebench::protocol {

void TrialLog::add(const Event& event) {
  if (trial.empty()) trial = event.header.trial;
  RankLog& r = ranks[event.header.rank];
  const int64_t t = event.header.t_us;
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, Hello>) r.hello = p;
        else if constexpr (std::is_same_v<T, ModelInfo>) r.model = p;
        else if constexpr (std::is_same_v<T, Step>) r.steps.push_back(p);
        else if constexpr (std::is_same_v<T, GpuSample>) r.samples.push_back({t, p});
        else if constexpr (std::is_same_v<T, Log>) r.logs.push_back({t, p});
        else if constexpr (std::is_same_v<T, Warning>) r.warnings.push_back({t, p});
        else if constexpr (std::is_same_v<T, Error>) r.errors.push_back({t, p});
        else if constexpr (std::is_same_v<T, Done>) r.done = p;
        else if constexpr (std::is_same_v<T, LinkProbe>) r.probes.push_back(p);
      },
      event.payload);
}

int TrialLog::world_size() const {
  for (const auto& [rank, r] : ranks)
    if (r.hello) return r.hello->world_size;
  return static_cast<int>(ranks.size());
}

nlohmann::json TrialLog::config() const {
  for (const auto& [rank, r] : ranks)
    if (r.hello) return r.hello->config;
  return nullptr;
}

std::vector<const Step*> TrialLog::measured_steps(int rank) const {
  std::vector<const Step*> out;
  auto it = ranks.find(rank);
  if (it == ranks.end()) return out;
  for (const auto& s : it->second.steps)
    if (!s.warmup) out.push_back(&s);
  return out;
}

TrialLog read_trial_log_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  TrialLog log;
  TrialLogBuilder builder(log);
  EventReader reader(builder);
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) reader.feed(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  reader.finish();
  return log;
}

}  // namespace tunebench::protocol
