// Random hex strings from the kernel's CSPRNG (getrandom): event tokens and remote names.
#pragma once

#include <cstddef>
#include <string>

namespace tunebench::launch {

// 2 * `bytes` hex digits. Throws std::runtime_error when the kernel gives no randomness.
std::string random_hex(size_t bytes);

}  // namespace tunebench::launch
