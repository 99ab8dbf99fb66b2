#include "core/telemetry/process_sampler.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tunebench::telemetry {

ProcessSampler::ProcessSampler(pid_t pid) : m_pid(pid == 0 ? ::getpid() : pid) {
  if (auto t = read_cpu_ticks()) {
    m_last_ticks = *t;
    m_last_time = std::chrono::steady_clock::now();
    m_have_last = true;
  }
}

std::optional<int64_t> ProcessSampler::read_cpu_ticks() const {
  std::ifstream in("/proc/" + std::to_string(m_pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  // Fields 3..: state(3) ... utime(14) stime(15).
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}

std::optional<int64_t> ProcessSampler::read_rss_bytes() const {
  std::ifstream in("/proc/" + std::to_string(m_pid) + "/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

protocol::GpuSample ProcessSampler::sample() {
  protocol::GpuSample s;
  s.index = -1;
  s.rss_bytes = read_rss_bytes();
  const auto ticks = read_cpu_ticks();
  const auto now = std::chrono::steady_clock::now();
  if (ticks && m_have_last) {
    const double dt = std::chrono::duration<double>(now - m_last_time).count();
    // Ticks are 10 ms: a rate over less than ~50 ms is mostly rounding, so skip it.
    if (dt >= 0.05) s.cpu_pct = 100.0 * (*ticks - m_last_ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / dt;
  }
  if (ticks) {
    m_last_ticks = *ticks;
    m_last_time = now;
    m_have_last = true;
  }
  return s;
}

}  // namespace tunebench::telemetry
