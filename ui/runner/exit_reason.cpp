#include "ui/runner/exit_reason.h"

#include <csignal>

namespace tunebench::ui {

QString describe_exit_code(int code) {
  switch (code) {
    case 0: return QStringLiteral("exited normally");
    case 1: return QStringLiteral("exit code 1 (internal error or crash in the worker)");
    case 2: return QStringLiteral("exit code 2 (invalid configuration)");
    case 3: return QStringLiteral("exit code 3 (out of memory)");
    case 4: return QStringLiteral("exit code 4 (communication failure: NCCL/Gloo, rendezvous or timeout)");
    case 5: return QStringLiteral("exit code 5 (unsupported on this build or machine)");
    case 6: return QStringLiteral("exit code 6 (event channel I/O error)");
    default: return QStringLiteral("exit code %1 (unknown to Tunebench)").arg(code);
  }
}

QString describe_signal(int sig) {
  QString what;
  switch (sig) {
    case SIGSEGV: what = "SIGSEGV, segmentation fault: the worker crashed"; break;
    case SIGABRT: what = "SIGABRT, aborted: a failed check or an uncaught exception"; break;
    case SIGBUS: what = "SIGBUS, bus error: the worker crashed"; break;
    case SIGFPE: what = "SIGFPE, arithmetic error: the worker crashed"; break;
    case SIGILL: what = "SIGILL, illegal instruction: the worker crashed"; break;
    case SIGKILL: what = "SIGKILL, killed: often the kernel's out-of-memory killer"; break;
    case SIGTERM: what = "SIGTERM, terminated from outside"; break;
    case SIGINT: what = "SIGINT, interrupted"; break;
    case SIGPIPE: what = "SIGPIPE, wrote to a closed pipe or socket"; break;
    default: what = "the worker was killed"; break;
  }
  return QStringLiteral("signal %1 (%2)").arg(sig).arg(what);
}

QString describe_error_kind(const QString& kind) {
  if (kind == "oom") return QStringLiteral("out of memory");
  if (kind == "nccl") return QStringLiteral("NCCL failure");
  if (kind == "timeout") return QStringLiteral("timeout");
  if (kind == "config") return QStringLiteral("invalid configuration");
  if (kind == "crash") return QStringLiteral("crash");
  if (kind == "unsupported") return QStringLiteral("unsupported");
  if (kind == "io") return QStringLiteral("event channel I/O error");
  if (kind == "rendezvous") return QStringLiteral("rendezvous failure (ranks could not meet)");
  if (kind == "internal") return QStringLiteral("internal error");
  return kind.isEmpty() ? QStringLiteral("error") : kind;
}

}  // namespace tunebench::ui
