// UTF-8-aware truncation for bounded strings.
#include "core/store/limits.h"

namespace tunebench::store {

std::string bounded(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is dropped whole.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace tunebench::store
