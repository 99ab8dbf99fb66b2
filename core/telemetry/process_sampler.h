// CPU use and resident memory of a process, from /proc: the telemetry of CPU-only runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include "core/protocol/events.h"

namespace tunebench::telemetry {

class ProcessSampler {
 public:
  explicit ProcessSampler(pid_t pid = 0);  // 0 = this process
  // cpu_pct is the share of one core used since the previous sample (first call: since creation);
  // 100 = one core busy. Fields stay empty when /proc cannot be read (process gone).
  protocol::GpuSample sample();

 private:
  std::optional<int64_t> read_cpu_ticks() const;
  std::optional<int64_t> read_rss_bytes() const;

  pid_t m_pid;
  int64_t m_last_ticks = 0;
  std::chrono::steady_clock::time_point m_last_time;
  bool m_have_last = false;
};

}  // namespace tunebench::telemetry
