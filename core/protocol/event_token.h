// The token line of a TCP event connection: before its first event, a rank that sends its events
// over TCP (ranks on other hosts, SLURM) writes "TUNEBENCH-TOKEN <token>\n", where <token> is the
// trial's random token, handed to the rank through TUNEBENCH_EVENT_TOKEN or --event-token. The
// listener drops a connection whose first line is anything else (docs/LAUNCH.md: threat model).
// Unix-socket connections carry no token: only their owner can connect to them.
#pragma once

#include <string>
#include <string_view>

namespace tunebench::protocol {

constexpr std::string_view kEventTokenVariable = "TUNEBENCH_EVENT_TOKEN";
constexpr size_t kMaxTokenLineBytes = 256;  // a longer first line is refused without reading on

std::string event_token_line(std::string_view token);  // with its '\n'

enum class TokenCheck { Ok, Missing, Wrong };
// Checks a first line (without '\n'; a trailing '\r' is ignored) against the expected token, in
// time that does not depend on where the tokens differ.
TokenCheck check_event_token_line(std::string_view line, std::string_view expected);

}  // namespace tunebench::protocol
