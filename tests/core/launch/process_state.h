// Whether a process is alive, read from /proc (a zombie counts as ended): for tests that check
// which processes a launcher or supervisor left behind.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>

namespace tunebench::launch::test {

inline bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

}  // namespace tunebench::launch::test
