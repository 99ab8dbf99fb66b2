#include "worker_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace tunebench::testing {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::vector<RankRun> start_ranks(int world, const std::vector<std::string>& args, const std::string& tag,
                                 const std::map<std::string, std::string>& extra_env, int only_rank) {
  const int port = free_port();
  std::vector<RankRun> runs;
  for (int r = 0; r < world; ++r) {
    if (only_rank >= 0 && r != only_rank) continue;
    RankRun run;
    const std::string base = ::testing::TempDir() + "/" + tag + "-" + std::to_string(::getpid()) + "-r" + std::to_string(r);
    run.events_path = base + ".jsonl";
    run.stderr_path = base + ".stderr";
    ::unlink(run.events_path.c_str());
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv(*e);
      const auto eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (world > 1) {
      env["RANK"] = std::to_string(r);
      env["WORLD_SIZE"] = std::to_string(world);
      env["LOCAL_RANK"] = std::to_string(r);
      env["MASTER_ADDR"] = "127.0.0.1";
      env["MASTER_PORT"] = std::to_string(port);
    }
    env["OMP_NUM_THREADS"] = "1";  // two ranks share two cores
    for (const auto& [k, v] : extra_env) env[k] = v;
    std::vector<std::string> argv_s = {TUNEBENCH_WORKER, "--events", "file:" + run.events_path, "--trial", tag};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s;
    for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int err = ::open(run.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(err, 2);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      std::vector<char*> argv, envp;
      for (auto& a : argv_s) argv.push_back(a.data());
      argv.push_back(nullptr);
      for (auto& e : env_s) envp.push_back(e.data());
      envp.push_back(nullptr);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    run.pid = pid;
    runs.push_back(run);
  }
  return runs;
}

int wait_rank(RankRun& run, double timeout_s) {
  if (run.exit_code >= 0) return run.exit_code;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int status = 0;
    const pid_t got = ::waitpid(run.pid, &status, WNOHANG);
    if (got == run.pid) {
      run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return run.exit_code;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void kill_all(std::vector<RankRun>& runs) {
  for (auto& r : runs)
    if (r.exit_code < 0) {
      ::kill(r.pid, SIGKILL);
      wait_rank(r, 10);
    }
}

protocol::TrialLog events_of(const RankRun& run) { return protocol::read_trial_log_file(run.events_path); }

std::string stderr_of(const RankRun& run) {
  std::ifstream in(run.stderr_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> small_model_args() {
  return {"--model", "custom", "--dim", "64", "--layers", "2", "--heads", "4", "--ffn", "176", "--vocab", "96",
          "--seq-len", "32", "--device", "cpu", "--gpu-sample-hz", "5"};
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace tunebench::testing
