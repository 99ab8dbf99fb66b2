#include "core/protocol/event_token.h"

namespace tunebench::protocol {

namespace {
constexpr std::string_view kPrefix = "TUNEBENCH-TOKEN ";
}

std::string event_token_line(std::string_view token) {
  std::string line(kPrefix);
  line += token;
  line += '\n';
  return line;
}

TokenCheck check_event_token_line(std::string_view line, std::string_view expected) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.substr(0, kPrefix.size()) != kPrefix) return TokenCheck::Missing;
  const std::string_view given = line.substr(kPrefix.size());
  if (expected.empty()) return TokenCheck::Wrong;  // no token was issued: nobody may connect
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i]) ^ static_cast<unsigned char>(i < given.size() ? given[i] : 0);
  return diff == 0 ? TokenCheck::Ok : TokenCheck::Wrong;
}

}  // namespace tunebench::protocol
