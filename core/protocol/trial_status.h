// A trial's status: the one type the session store, the runners (GUI and headless), the trials
// table and the investigation drivers all use, so no layer maps one status onto another by hand.
#pragma once

#include <optional>
#include <string_view>

namespace tunebench::protocol {

// Queued: configured, not started. Running: a writer (or runner) owns it now. Done/Failed: the run
// ended by itself (Failed: an error event, a non-zero exit, a hang, a lost connection).
// Interrupted: its writer vanished (crash, SIGKILL, power). Stopped: the user stopped it.
enum class TrialStatus { Queued, Running, Done, Failed, Interrupted, Stopped };

// The names stored in the session's trials table, printed by the CLI and shown in the table:
// "queued", "running", "done", "failed", "interrupted", "stopped".
std::string_view to_string(TrialStatus status);
std::optional<TrialStatus> trial_status_from_string(std::string_view text);

}  // namespace tunebench::protocol
