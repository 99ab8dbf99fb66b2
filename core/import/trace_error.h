// TraceError: the one exception the torch.profiler trace import throws.
//
// what() is one or two sentences a user can act on ("rank0.json.gz is truncated: the gzip stream
// ends at 1.2 MB of 4.5 MB"), so the CLI prints it and the GUI puts it in a message box as it is.
// Nothing is written to a session before the import has succeeded, so a TraceError always means
// "nothing changed".
#pragma once

#include <stdexcept>
#include <string>

namespace tunebench::import {

class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tunebench::import
