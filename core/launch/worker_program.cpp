#include "core/launch/worker_program.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace tunebench::launch {

namespace {
bool executable(const std::filesystem::path& p) { return ::access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p); }

std::filesystem::path self_dir(const std::string& program_dir) {
  if (!program_dir.empty()) return program_dir;
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
}
}  // namespace

std::string find_worker(const std::string& explicit_path, const std::string& program_dir) {
  // Named ones are taken as they are: starting them says what is wrong in plain words.
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("TUNEBENCH_WORKER"); env && *env) return env;
  const auto dir = self_dir(program_dir);
  for (const auto& candidate : {dir / "tunebench-worker", dir / ".." / "worker" / "tunebench-worker"}) {
    std::error_code ec;
    if (executable(candidate)) return std::filesystem::weakly_canonical(candidate, ec).string();
  }
  return {};
}

std::string worker_not_found_message(const std::string& program_dir) {
  return "no tunebench-worker beside " + self_dir(program_dir).string() +
         " or in ../worker; give --worker PATH or set TUNEBENCH_WORKER";
}

}  // namespace tunebench::launch
