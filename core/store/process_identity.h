// Who is writing a trial: a token naming this process, and the test whether that process is gone.
//
// A running trial records its writer's token. When a session is opened for writing, a running
// trial whose writer is gone was cut off (crash, SIGKILL, power) and becomes "interrupted". The
// token includes the process start time so a recycled pid does not keep a dead trial "running".
// This unit deliberately knows nothing about SQLite.
#pragma once

#include <string>

namespace tunebench::store {

// "host|pid|start" where start is the process start time in clock ticks since boot (Linux), or 0.
std::string current_owner_token();

// True when the owner named by `token` is certainly not running: another host (a session file is
// never written over the network), no such pid, a zombie, or a pid reused by a newer process.
// An empty or unreadable token counts as gone.
bool owner_is_gone(const std::string& token);

// The pid in a token, or -1.
long owner_pid(const std::string& token);

}  // namespace tunebench::store
