// Failures the engine turns into `error` events and exit codes. Anything else escaping the
// engine is a bug ("crash", exit 1).
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/protocol/exit_codes.h"

namespace tunebench::engine {

class EngineError : public std::runtime_error {
 public:
  EngineError(std::string kind, int exit_code, const std::string& message,
              nlohmann::json details = nlohmann::json::object())
      : std::runtime_error(message), m_kind(std::move(kind)), m_exit_code(exit_code), m_details(std::move(details)) {}
  const std::string& kind() const { return m_kind; }
  int exit_code() const { return m_exit_code; }
  const nlohmann::json& details() const { return m_details; }

 private:
  std::string m_kind;
  int m_exit_code;
  nlohmann::json m_details;
};

inline EngineError unsupported(const std::string& message) {
  return EngineError("unsupported", protocol::kExitUnsupported, message);
}

}  // namespace tunebench::engine
