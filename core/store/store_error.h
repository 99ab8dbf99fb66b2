// StoreError: the one exception type the session store throws.
//
// Every failure a user can meet (a file that is not a session, a newer schema, a corrupt page, a
// trial that does not exist) arrives as a StoreError whose what() is one readable sentence that can
// go straight into a message box. SQLite's own exceptions never leave core/store.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace tunebench::store {

class StoreError : public std::runtime_error {
 public:
  // `details`: SQLite's own words and code where SQLite failed (sqlite_failure(), connection.h), for
  // the log or a message box's Details section; never part of what().
  explicit StoreError(const std::string& message, std::string details = {})
      : std::runtime_error(message), m_details(std::move(details)) {}
  const std::string& details() const { return m_details; }

 private:
  std::string m_details;
};

}  // namespace tunebench::store
