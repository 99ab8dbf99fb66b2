// UTF-8-aware truncation and repair for bounded strings.
#include "core/store/limits.h"

namespace tunebench::store {

std::string bounded(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is dropped whole.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    // Length and the allowed range of the second byte (RFC 3629, table 3-7 of Unicode).
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
      n = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c == 0xE0)
      n = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC)
      n = 3;
    else if (c == 0xED)
      n = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF)
      n = 3;
    else if (c == 0xF0)
      n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      n = 4;
    else if (c == 0xF4)
      n = 4, hi = 0x8F;
    bool ok = n > 0 && i + n <= text.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

}  // namespace tunebench::store
