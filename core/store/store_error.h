// StoreError: the one exception type the session store throws.
//
// Every failure a user can meet (a file that is not a session, a newer schema, a corrupt page, a
// trial that does not exist) arrives as a StoreError whose what() is one readable sentence that can
// go straight into a message box. SQLite's own exceptions never leave core/store.
#pragma once

#include <stdexcept>
#include <string>

namespace tunebench::store {

class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tunebench::store
