// Base64 (RFC 4648, standard alphabet, padded): how the report carries its binary session copy
// inside HTML text. Decoding is strict and bounded, because the text comes from a stranger's file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tunebench::report {

// `line` > 0 breaks the output every `line` characters with '\n'.
std::string base64_encode(std::string_view bytes, size_t line = 0);
// ASCII whitespace is skipped; any other character outside the alphabet, padding anywhere but
// the end, a length that is not a whole number of quads, or more than `max_bytes` of output:
// nullopt.
std::optional<std::string> base64_decode(std::string_view text, size_t max_bytes);

}  // namespace tunebench::report
