// Turning exit codes, signals and error events into sentences a user can act on. Qt-free: the
// GUI's runner (ui/runner/exit_reason.h wraps these) and the headless runner say the same words.
#pragma once

#include <string>

namespace tunebench::launch {

// The worker's exit codes (0 ok, 1 crash, 2 config, 3 OOM, 4 communication, 5 unsupported, 6 I/O).
std::string describe_exit_code(int code);
// "signal 11 (SIGSEGV, segmentation fault: the rank crashed)".
std::string describe_signal(int signal);
// An error event's kind in words ("out of memory", "NCCL failure", ...).
std::string describe_error_kind(const std::string& kind);
// A status as a shell reports it (remote ranks): 128 + N is signal N, 127 not found.
std::string describe_shell_status(int status);

}  // namespace tunebench::launch
