// Ends a rank that stops making progress. A peer that dies inside an NCCL collective leaves the
// others waiting forever; the watchdog turns that into an `error` event (kind "timeout") and exit
// code 4 after `timeout_s` without a kick(), so no rank hangs silently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tunebench::worker {

class Watchdog {
 public:
  // `on_timeout` runs on the watchdog thread and must end the process.
  Watchdog(double timeout_s, std::function<void(double waited_s)> on_timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void kick();

 private:
  std::chrono::steady_clock::duration m_timeout;
  std::function<void(double)> m_on_timeout;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::chrono::steady_clock::time_point m_last;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace tunebench::worker
