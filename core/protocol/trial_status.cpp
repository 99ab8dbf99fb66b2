#include "core/protocol/trial_status.h"

#include <array>

namespace tunebench::protocol {
namespace {
constexpr std::array<std::string_view, 6> kStatusNames = {"queued", "running",     "done",
                                                          "failed", "interrupted", "stopped"};
}

std::string_view to_string(TrialStatus status) { return kStatusNames[static_cast<size_t>(status)]; }

std::optional<TrialStatus> trial_status_from_string(std::string_view text) {
  for (size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == text) return static_cast<TrialStatus>(i);
  return std::nullopt;
}

}  // namespace tunebench::protocol
