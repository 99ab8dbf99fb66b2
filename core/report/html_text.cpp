#include "core/report/html_text.h"

#include <algorithm>

#include "core/store/limits.h"

namespace tunebench::report {

namespace {
// Valid UTF-8, with C0 controls (tab and newline included) and DEL as spaces.
std::string clean(std::string_view text) {
  std::string s = store::valid_utf8(text);
  for (char& c : s)
    if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) c = ' ';
  return s;
}
}  // namespace

std::string html_escape(std::string_view text) {
  const std::string s = store::valid_utf8(text);
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
      case '\t':
        out += c;
        break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    }
  }
  return out;
}

std::string markdown_escape(std::string_view text) {
  const std::string s = clean(text);
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      const bool syntax = std::string_view("\\`*_[]|#~").find(c) != std::string_view::npos ||
                          (out.empty() && std::string_view("+-!").find(c) != std::string_view::npos);
      if (syntax) out += '\\';
      out += c;
    }
  }
  return out;
}

std::string code_text(std::string_view text) { return clean(text); }

size_t longest_backtick_run(std::string_view text) {
  size_t best = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace tunebench::report
