// Each rank runs in its own process group, so stopping a rank also stops whatever it spawned
// (NCCL proxy threads live in-process, but a rank may fork helpers): no orphans.
#pragma once

#include <QtGlobal>

class QProcess;

namespace tunebench::ui {

// Makes the child call setpgid(0, 0) and ask Linux to kill it when the GUI dies (PR_SET_PDEATHSIG).
void run_in_own_process_group(QProcess& process);
// Sends `signal` to the whole group led by `pid`; false if it is already gone.
bool signal_process_group(qint64 pid, int signal);

}  // namespace tunebench::ui
