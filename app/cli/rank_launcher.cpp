#include "app/cli/rank_launcher.h"

#include "core/launch/launch_plan.h"
#include "core/launch/worker_program.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;  // POSIX: the process environment

namespace tunebench::cli {

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot open a socket to find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free port on 127.0.0.1");
  return ntohs(addr.sin_port);
}

}  // namespace

std::string find_worker(const std::string& explicit_path) {
  const std::string found = launch::find_worker(explicit_path);
  if (found.empty()) throw std::runtime_error(launch::worker_not_found_message());
  if (::access(found.c_str(), X_OK) != 0) throw std::runtime_error(found + " is not an executable worker");
  return found;
}

std::vector<LaunchedRank> launch_ranks(const std::string& worker, int world, const std::vector<std::string>& args,
                                       const std::string& trial, const std::string& dir) {
  const int port = free_port();
  std::map<std::string, std::string> base;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) base[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // The variables every local rank gets come from core/launch (the GUI's and `run`'s as well).
  config::TrialConfig ranks_config;
  ranks_config.world_size = world;
  std::vector<LaunchedRank> ranks;
  for (int r = 0; r < world; ++r) {
    LaunchedRank rank;
    rank.events_path = dir + "/rank" + std::to_string(r) + ".jsonl";
    rank.stderr_path = dir + "/rank" + std::to_string(r) + ".stderr";
    auto env = base;
    for (const auto& [k, v] : launch::local_rank_env(ranks_config, r, port, trial)) env[k] = v;
    std::vector<std::string> argv_s = {worker, "--events", "file:" + rank.events_path, "--trial", trial};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s;
    for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("cannot start rank " + std::to_string(r));
    if (pid == 0) {
      const int err = ::open(rank.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) ::dup2(err, 2);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) ::dup2(devnull, 1);  // NCCL and libtorch print on stdout
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    rank.pid = pid;
    ranks.push_back(rank);
  }
  return ranks;
}

bool wait_ranks(std::vector<LaunchedRank>& ranks, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool all = true;
  for (auto& r : ranks) {
    while (r.exit_code < 0) {
      int status = 0;
      if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(r.pid, SIGKILL);
        ::waitpid(r.pid, &status, 0);
        all = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return all;
}

}  // namespace tunebench::cli
