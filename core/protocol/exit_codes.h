// tunebench-worker's exit codes, shared by the worker (which returns them) and the runners (which
// explain them). A worker killed by a signal has no exit code: the runner reports the signal.
#pragma once

#include <string_view>

namespace tunebench::protocol {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,       // a bug or an unexpected exception ("crash")
  kExitConfig = 2,         // invalid configuration or command line; nothing ran
  kExitOutOfMemory = 3,    // device (or host) memory exhausted
  kExitCommunication = 4,  // NCCL/Gloo failure, rendezvous failure, collective timeout, peer died
  kExitUnsupported = 5,    // asked for something this build or machine cannot do (e.g. CUDA)
  kExitEventChannel = 6,   // the event channel could not be opened
};

// The error-event kind that goes with an exit code.
constexpr std::string_view error_kind_for(int exit_code) {
  switch (exit_code) {
    case kExitConfig: return "config";
    case kExitOutOfMemory: return "oom";
    case kExitCommunication: return "nccl";
    case kExitUnsupported: return "unsupported";
    case kExitEventChannel: return "io";
    default: return "crash";
  }
}

// What an exit code means, in a few words: the one vocabulary of the runners' messages
// (launch::describe_exit_code puts it after "exit code N"). Ranks may be the worker or a user's
// script under tunebench_probe, which exits with the same codes.
constexpr std::string_view describe_exit_code(int exit_code) {
  switch (exit_code) {
    case kExitOk: return "finished";
    case kExitInternal: return "internal error or crash";
    case kExitConfig: return "invalid configuration";
    case kExitOutOfMemory: return "out of memory";
    case kExitCommunication: return "communication failure (NCCL/Gloo, rendezvous) or a timeout";
    case kExitUnsupported: return "unsupported on this build or machine";
    case kExitEventChannel: return "event channel I/O error";
    default: return "unknown to Tunebench";
  }
}

}  // namespace tunebench::protocol
