// Turning exit codes, signals and error events into sentences a user can act on: QString faces
// of core/launch/exit_reason.h (one wording for the GUI and the CLI).
#pragma once

#include <QString>

namespace tunebench::ui {

// The worker's exit codes (0 ok, 1 crash, 2 config, 3 OOM, 4 communication, 5 unsupported, 6 I/O).
QString describe_exit_code(int code);
// "signal 11 (SIGSEGV, segmentation fault: the rank crashed)".
QString describe_signal(int signal);
// An error event's kind in words ("out of memory", "NCCL failure", ...).
QString describe_error_kind(const QString& kind);
// A status as a shell reports it (remote ranks): 128 + N is signal N.
QString describe_shell_status(int status);

}  // namespace tunebench::ui
