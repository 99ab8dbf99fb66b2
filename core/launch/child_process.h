// A child process for the headless runner: argv looked up in PATH, the caller's environment plus
// some variables, its own process group (so a signal reaches everything it started), stdin a
// pipe the caller may close (the ssh launcher's stop), stdout and stderr pipes. POSIX only, no Qt
// (the GUI uses QProcess with the same LaunchProcess).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tunebench::launch {

class ChildProcess {
 public:
  // Starts the process; on failure returns null and says why in `error` (exec errors included:
  // they travel back through a close-on-exec pipe).
  static std::unique_ptr<ChildProcess> start(const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& env, std::string* error);
  ~ChildProcess();  // closes the pipes; SIGKILLs the group of a child still running and reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return m_pid; }
  int stdout_fd() const { return m_out; }  // -1 once closed
  int stderr_fd() const { return m_err; }
  void close_stdout();
  void close_stderr();
  void close_stdin();
  bool stdin_open() const { return m_in >= 0; }
  void signal_group(int sig) const;

  // Reaps the child if it exited (non-blocking). True once it has exited.
  bool poll_exit();
  bool exited() const { return m_exited; }
  int exit_code() const { return m_exit_code; }    // valid when exited() and !signaled()
  int term_signal() const { return m_signal; }     // > 0 when killed by a signal
  // The shell's convention: the exit code, or 128 + the signal.
  int shell_status() const { return m_signal > 0 ? 128 + m_signal : m_exit_code; }

 private:
  ChildProcess() = default;
  pid_t m_pid = -1;
  int m_in = -1, m_out = -1, m_err = -1;
  bool m_exited = false;
  int m_exit_code = 0, m_signal = 0;
};

// Runs argv to its end (for scancel), at most `timeout_s`; returns its shell status, -1 on failure.
int run_command(const std::vector<std::string>& argv, double timeout_s, std::string* output);

}  // namespace tunebench::launch
