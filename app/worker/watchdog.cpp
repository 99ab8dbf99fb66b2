#include "watchdog.h"

#include <algorithm>

namespace tunebench::worker {

namespace {
// config::validate bounds the timeouts to a week; a caller that did not validate still gets a
// deadline, never an overflowed one (1e30 s used to become a negative duration: "no progress for 0 s").
std::chrono::steady_clock::duration bounded(double timeout_s) {
  const double s = timeout_s > 0 ? std::min(timeout_s, 1e7) : 0.0;  // NaN -> 0
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

Watchdog::Watchdog(double timeout_s, std::function<void(double)> on_timeout)
    : m_timeout(bounded(timeout_s)), m_on_timeout(std::move(on_timeout)), m_last(std::chrono::steady_clock::now()) {
  m_thread = std::thread([this] {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stop) {
      const auto deadline = m_last + m_timeout;
      if (m_cv.wait_until(lock, deadline, [this] { return m_stop; })) return;
      if (std::chrono::steady_clock::now() >= m_last + m_timeout) {
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_last).count();
        lock.unlock();
        m_on_timeout(waited);
        return;
      }
    }
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void Watchdog::kick() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_last = std::chrono::steady_clock::now();
}

}  // namespace tunebench::worker
