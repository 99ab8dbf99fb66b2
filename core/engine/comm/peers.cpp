// Naming the rank that was lost after a collective failed: Gloo says "Connection closed by peer
// [127.0.0.1]:8579", the watchdog "no progress"; the rendezvous told every rank who the others
// are, so a rank on this host whose process is gone (or a zombie) can be named exactly.
#include <signal.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "core/engine/comm/communicator.h"

namespace tunebench::engine {
namespace {

std::string this_host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// A process that no longer runs: no such pid, or one that exited and was not reaped yet.
bool process_gone(int64_t pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return false;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace

std::string Communicator::describe_lost_peers() const {
  if (m_peers.empty()) return "";
  const std::string host = this_host();
  std::string gone, unknown;
  // A peer's sockets close while it exits, a moment before it shows as a zombie: look again briefly.
  for (int attempt = 0; attempt < 10 && gone.empty(); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    unknown.clear();
    for (size_t r = 0; r < m_peers.size(); ++r) {
      if (static_cast<int>(r) == rank()) continue;
      const auto& p = m_peers[r];
      const std::string who = "rank " + std::to_string(r) + " (pid " + std::to_string(p.pid) + " on " + p.host + ")";
      if (p.host != host)
        unknown += (unknown.empty() ? "" : ", ") + who;
      else if (process_gone(p.pid))
        gone += (gone.empty() ? "" : ", ") + who;
    }
  }
  if (!gone.empty()) return gone + (gone.find(',') == std::string::npos ? " has" : " have") + " exited.";
  if (!unknown.empty()) return "Every rank on this host still runs; check " + unknown + ".";
  return "Every other rank still runs; one of them may hang.";
}

}  // namespace tunebench::engine
