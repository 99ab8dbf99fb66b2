#include "core/launch/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;  // POSIX: the process environment

namespace tunebench::launch {

namespace {
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

std::unique_ptr<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                                  const std::map<std::string, std::string>& env,
                                                  std::string* error) {
  if (argv.empty() || argv[0].empty()) {
    if (error) *error = "no program to start";
    return nullptr;
  }
  std::map<std::string, std::string> merged;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_s;
  for (const auto& [k, v] : merged) env_s.push_back(k + "=" + v);
  std::vector<std::string> argv_s = argv;
  std::vector<char*> cargv, cenv;
  for (auto& a : argv_s) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env_s) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int in[2], out[2], err[2], status[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0) {
    if (error) *error = std::string("cannot create pipes: ") + std::strerror(errno);
    return nullptr;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (error) *error = std::string("cannot fork: ") + std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], status[0], status[1]}) ::close(fd);
    return nullptr;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(status[1], &e, sizeof(e));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with a signal sent right after start()
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(status[1]);
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(status[0], &exec_errno, sizeof(exec_errno));
  while (n < 0 && errno == EINTR);
  ::close(status[0]);
  std::unique_ptr<ChildProcess> child(new ChildProcess);
  child->m_pid = pid;
  child->m_in = in[1];
  child->m_out = out[0];
  child->m_err = err[0];
  if (n == sizeof(exec_errno)) {
    if (error) *error = "cannot start " + argv[0] + ": " + std::strerror(exec_errno);
    int st = 0;
    ::waitpid(pid, &st, 0);
    child->m_exited = true;
    return nullptr;
  }
  return child;
}

ChildProcess::~ChildProcess() {
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_err);
  if (m_pid > 0 && !m_exited) {
    ::kill(-m_pid, SIGKILL);
    int st = 0;
    ::waitpid(m_pid, &st, 0);
  }
}

void ChildProcess::close_stdout() { close_fd(m_out); }
void ChildProcess::close_stderr() { close_fd(m_err); }
void ChildProcess::close_stdin() { close_fd(m_in); }

void ChildProcess::signal_group(int sig) const {
  if (m_pid > 0 && !m_exited) ::kill(-m_pid, sig);
}

bool ChildProcess::poll_exit() {
  if (m_exited) return true;
  int st = 0;
  const pid_t r = ::waitpid(m_pid, &st, WNOHANG);
  if (r != m_pid) return false;
  m_exited = true;
  if (WIFSIGNALED(st)) m_signal = WTERMSIG(st);
  else m_exit_code = WEXITSTATUS(st);
  return true;
}

int run_command(const std::vector<std::string>& argv, double timeout_s, std::string* output) {
  std::string error;
  auto child = ChildProcess::start(argv, {}, &error);
  if (!child) {
    if (output) *output = error;
    return -1;
  }
  child->close_stdin();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string text;
  while (true) {
    pollfd fds[2] = {{child->stdout_fd(), POLLIN, 0}, {child->stderr_fd(), POLLIN, 0}};
    ::poll(fds, 2, 50);
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) text.append(buf, size_t(got));
      else if (i == 0) child->close_stdout();
      else child->close_stderr();
    }
    if (child->poll_exit() && child->stdout_fd() < 0 && child->stderr_fd() < 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      child->signal_group(SIGKILL);
      while (!child->poll_exit()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (output) *output = text;
      return -1;
    }
  }
  if (output) *output = text;
  return child->shell_status();
}

}  // namespace tunebench::launch
