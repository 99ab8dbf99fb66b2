// Exit codes, signals and error events as sentences (shared by the GUI's runner and run_trial).
#include "core/launch/exit_reason.h"

#include <csignal>

#include "core/protocol/exit_codes.h"

namespace tunebench::launch {

std::string describe_exit_code(int code) {
  if (code == 0) return "exited normally";
  return "exit code " + std::to_string(code) + " (" + std::string(protocol::describe_exit_code(code)) + ")";
}

std::string describe_signal(int sig) {
  std::string what;
  switch (sig) {
    case SIGSEGV: what = "SIGSEGV, segmentation fault: the rank crashed"; break;
    case SIGABRT: what = "SIGABRT, aborted: a failed check or an uncaught exception"; break;
    case SIGBUS: what = "SIGBUS, bus error: the rank crashed"; break;
    case SIGFPE: what = "SIGFPE, arithmetic error: the rank crashed"; break;
    case SIGILL: what = "SIGILL, illegal instruction: the rank crashed"; break;
    case SIGKILL: what = "SIGKILL, killed: often the kernel's out-of-memory killer"; break;
    case SIGTERM: what = "SIGTERM, terminated from outside"; break;
    case SIGINT: what = "SIGINT, interrupted"; break;
    case SIGPIPE: what = "SIGPIPE, wrote to a closed pipe or socket"; break;
    default: what = "the worker was killed"; break;
  }
  return "signal " + std::to_string(sig) + " (" + what + ")";
}

std::string describe_error_kind(const std::string& kind) {
  if (kind == "oom") return std::string("out of memory");
  if (kind == "nccl") return std::string("NCCL failure");
  if (kind == "timeout") return std::string("timeout");
  if (kind == "config") return std::string("invalid configuration");
  if (kind == "crash") return std::string("crash");
  if (kind == "unsupported") return std::string("unsupported");
  if (kind == "io") return std::string("event channel I/O error");
  if (kind == "rendezvous") return std::string("rendezvous failure (ranks could not meet)");
  if (kind == "internal") return std::string("internal error");
  return kind.empty() ? std::string("error") : kind;
}


std::string describe_shell_status(int status) {
  if (status == 127) return "exit code 127 (the worker program was not found there)";
  if (status == 126) return "exit code 126 (the worker program is not executable there)";
  if (status > 128 && status < 128 + 65) return describe_signal(status - 128);
  return describe_exit_code(status);
}
}  // namespace tunebench::launch
