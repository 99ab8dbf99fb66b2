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

// One sentence for a user, e.g. in the trials table.
constexpr std::string_view describe_exit_code(int exit_code) {
  switch (exit_code) {
    case kExitOk: return "finished";
    case kExitInternal: return "the worker failed with an internal error";
    case kExitConfig: return "the configuration was rejected before anything ran";
    case kExitOutOfMemory: return "out of memory";
    case kExitCommunication: return "communication between ranks failed or timed out";
    case kExitUnsupported: return "this build or machine cannot run the requested configuration";
    case kExitEventChannel: return "the worker could not open its event channel";
    default: return "the worker exited with an unknown code";
  }
}

}  // namespace tunebench::protocol
