#include "core/launch/worker_program.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "core/launch/child_process.h"

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

namespace {
// Whether `path` lies in `folder` (both made canonical as far as they exist).
bool path_inside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  std::error_code ec;
  const auto p = std::filesystem::weakly_canonical(path, ec);
  const auto f = std::filesystem::weakly_canonical(folder, ec);
  const auto rel = p.lexically_relative(f);
  return !rel.empty() && *rel.begin() != "..";
}

bool has_probe(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "tunebench_probe" / "__main__.py", ec);
}
}  // namespace

std::string find_probe(const std::string& program_dir) {
  if (const char* env = std::getenv("TUNEBENCH_PROBE_PATH"); env && *env) return has_probe(env) ? env : "";
  const auto dir = self_dir(program_dir);
  std::vector<std::filesystem::path> candidates = {dir / ".." / "share" / "tunebench" / "python"};
#if defined(TUNEBENCH_SOURCE_PROBE_DIR) && defined(TUNEBENCH_BUILD_DIR)
  if (path_inside(dir, TUNEBENCH_BUILD_DIR))  // the build tree runs the source's package; an install never
    candidates.emplace_back(TUNEBENCH_SOURCE_PROBE_DIR);
#endif
  for (const auto& c : candidates) {
    std::error_code ec;
    if (has_probe(c)) return std::filesystem::weakly_canonical(c, ec).string();
  }
  return {};
}

std::string probe_not_found_message(const std::string& program_dir) {
  return "tunebench_probe (which runs your script as a trial) is not in " +
         (self_dir(program_dir) / ".." / "share" / "tunebench" / "python").lexically_normal().string() +
         "; reinstall Tunebench, or set TUNEBENCH_PROBE_PATH to the folder that holds tunebench_probe";
}

namespace {
// Each candidate is asked once per process: importing torch takes a second or two.
PythonFound search_python(const std::string& explicit_python) {
  static std::mutex mutex;
  static std::map<std::string, PythonFound> asked;  // candidate -> answer
  auto ask = [](const std::string& python) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = asked.find(python); it != asked.end()) return it->second;
    PythonFound f;
    std::string out;
    const int status =
        run_command({python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"}, 60.0, &out);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (status == 0 && !out.empty()) {
      f.path = python;
      f.torch_version = out;
    } else {
      const auto last = out.rfind('\n');
      f.error = python + ": " + (status < 0 && out.empty() ? "cannot run it" : out.substr(last == std::string::npos ? 0 : last + 1));
    }
    asked[python] = f;
    return f;
  };
  if (!explicit_python.empty()) return ask(explicit_python);
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TUNEBENCH_PYTHON"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  std::string tried;
  for (const auto& c : candidates) {
    const PythonFound f = ask(c);
    if (!f.path.empty()) return f;
    tried += (tried.empty() ? "" : "; ") + f.error;
  }
  PythonFound none;
  none.error = "no Python with PyTorch found (" + tried + "); name the interpreter (python)";
  return none;
}

// find_python's answers by argument, for known_python: its own lock, never held during a search.
std::mutex g_found_mutex;
std::map<std::string, PythonFound> g_found;
}  // namespace

PythonFound find_python(const std::string& explicit_python) {
  PythonFound f = search_python(explicit_python);
  std::lock_guard<std::mutex> lock(g_found_mutex);
  g_found[explicit_python] = f;
  return f;
}

std::optional<PythonFound> known_python(const std::string& explicit_python) {
  std::lock_guard<std::mutex> lock(g_found_mutex);
  if (auto it = g_found.find(explicit_python); it != g_found.end()) return it->second;
  return std::nullopt;
}

}  // namespace tunebench::launch
