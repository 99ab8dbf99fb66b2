#include "ui/runner/process_group.h"

#include <QProcess>

#include <csignal>
#include <sys/types.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace tunebench::ui {

void run_in_own_process_group(QProcess& process) {
  // Runs in the child between fork and exec: only async-signal-safe calls here.
  process.setChildProcessModifier([] {
    ::setpgid(0, 0);
#ifdef __linux__
    // If the GUI is killed outright, the ranks die with it instead of training on as orphans.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  });
}

bool signal_process_group(qint64 pid, int signal) {
  if (pid <= 0) return false;
  if (::kill(-static_cast<pid_t>(pid), signal) == 0) return true;
  // The group may not exist yet (exec raced with us): signal the process itself.
  return ::kill(static_cast<pid_t>(pid), signal) == 0;
}

}  // namespace tunebench::ui
