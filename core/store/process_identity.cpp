// Process liveness from kill(pid, 0) and /proc/PID/stat (state and start time).
#include "core/store/process_identity.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace tunebench::store {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

struct ProcStat {
  bool readable = false;
  char state = '?';
  unsigned long long start_ticks = 0;
};

// /proc/PID/stat: "pid (comm) state ... field 22 = starttime". comm may contain spaces and
// parentheses, so parse from the last ')'.
ProcStat read_proc_stat(long pid) {
  ProcStat out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return out;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream rest(line.substr(close + 1));
  rest >> out.state;
  std::string field;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  if (rest >> out.start_ticks) out.readable = true;
  return out;
}

}  // namespace

std::string current_owner_token() {
  const long pid = static_cast<long>(getpid());
  const ProcStat st = read_proc_stat(pid);
  return host_name() + "|" + std::to_string(pid) + "|" + std::to_string(st.start_ticks);
}

long owner_pid(const std::string& token) {
  const auto a = token.find('|');
  const auto b = token.find('|', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos) return -1;
  try {
    return std::stol(token.substr(a + 1, b - a - 1));
  } catch (...) {
    return -1;
  }
}

bool owner_is_gone(const std::string& token) {
  const auto a = token.find('|');
  const auto b = token.find('|', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos) return true;
  if (token.substr(0, a) != host_name()) return true;
  const long pid = owner_pid(token);
  if (pid <= 0) return true;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  const ProcStat st = read_proc_stat(pid);
  if (!st.readable) return false;  // no /proc: kill() said it exists, believe it
  if (st.state == 'Z' || st.state == 'X') return true;
  unsigned long long start = 0;
  try {
    start = std::stoull(token.substr(b + 1));
  } catch (...) {
    return true;
  }
  return start != 0 && start != st.start_ticks;
}

}  // namespace tunebench::store
