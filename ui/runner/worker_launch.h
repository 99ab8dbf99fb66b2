// What the GUI adds to core/launch (launch_plan.h, the one definition of how ranks start): where
// the worker is relative to the GUI, and a free port for a local rendezvous.
#pragma once

#include <QString>

namespace tunebench::ui {

// launch::find_worker for the GUI: TUNEBENCH_WORKER if set, else tunebench-worker next to this
// executable, else <dir>/../worker/tunebench-worker (the build tree: build/app/gui ->
// build/app/worker); when none exists, <dir>/tunebench-worker, which the runner then reports.
QString find_worker_program(const QString& applicationDir);

// A TCP port on 127.0.0.1 that was free a moment ago (for MASTER_PORT); 0 when none could be bound.
quint16 pick_free_port();

}  // namespace tunebench::ui
