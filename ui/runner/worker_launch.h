// What the GUI adds to core/launch (launch_plan.h, the one definition of how ranks start): where
// the worker is relative to the GUI, for the launch preview.
#pragma once

#include <QString>

namespace tunebench::ui {

// launch::find_worker for the GUI: TUNEBENCH_WORKER if set, else tunebench-worker next to this
// executable, else <dir>/../worker/tunebench-worker (the build tree: build/app/gui ->
// build/app/worker); when none exists, <dir>/tunebench-worker (the preview shows where it looked;
// TrialRunner refuses to start with launch::worker_not_found_message).
QString find_worker_program(const QString& applicationDir);

}  // namespace tunebench::ui
