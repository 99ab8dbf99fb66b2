#include "core/report/base64.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace tunebench::report {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> decode_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr auto kDecode = decode_table();

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'; }
}  // namespace

std::string base64_encode(std::string_view bytes, size_t line) {
  std::string out;
  const size_t n = (bytes.size() + 2) / 3 * 4;
  out.reserve(n + (line ? n / line + 1 : 0));
  size_t column = 0;
  auto put = [&](char c) {
    if (line && column == line) {
      out += '\n';
      column = 0;
    }
    out += c;
    ++column;
  };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    put(kAlphabet[(v >> 18) & 63]);
    put(kAlphabet[(v >> 12) & 63]);
    put(kAlphabet[(v >> 6) & 63]);
    put(kAlphabet[v & 63]);
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    put(kAlphabet[(v >> 18) & 63]);
    put(kAlphabet[(v >> 12) & 63]);
    put(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    put('=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size() / 4 * 3, max_bytes));
  uint32_t quad = 0;
  int have = 0;     // sextets in `quad`
  int padding = 0;  // '=' seen
  for (char c : text) {
    if (is_space(c)) continue;
    if (c == '=') {
      if (have < 2 || ++padding > 2) return std::nullopt;
      quad <<= 6;
      ++have;
    } else {
      const int8_t v = kDecode[static_cast<unsigned char>(c)];
      if (v < 0 || padding > 0) return std::nullopt;  // nothing may follow padding
      quad = (quad << 6) | uint32_t(v);
      ++have;
    }
    if (have == 4) {
      const int n = 3 - padding;
      if (out.size() + size_t(n) > max_bytes) return std::nullopt;
      out += static_cast<char>((quad >> 16) & 0xff);
      if (n > 1) out += static_cast<char>((quad >> 8) & 0xff);
      if (n > 2) out += static_cast<char>(quad & 0xff);
      quad = 0;
      have = 0;
      if (padding) padding = 3;  // marks the end: any further sextet or '=' is refused
    }
  }
  if (have != 0) return std::nullopt;
  return out;
}

}  // namespace tunebench::report
