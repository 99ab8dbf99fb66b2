// Text into HTML and Markdown, safely: every string that reaches a report from a session (trial
// names, notes, tags, hosts, messages, config values) passes through one of these, so a name like
// `</script><script>…` or `" onload="…` stays text. Invalid UTF-8 is replaced (store::valid_utf8)
// and control characters become spaces.
#pragma once

#include <string>
#include <string_view>

namespace tunebench::report {

// For element content and double-quoted attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);
// For Markdown table cells and running text (GitHub, Discourse): & < > as entities (Markdown
// passes HTML through), the characters Markdown reads as syntax (\ ` * _ [ ] | # ~ and a leading
// + - !) backslash-escaped, line breaks as spaces.
std::string markdown_escape(std::string_view text);
// For inside a fenced code block: valid UTF-8, no control characters, no line breaks (each line
// of a block holds one item). Backticks are kept; the caller picks a fence longer than any run.
std::string code_text(std::string_view text);
// The longest run of '`' in `text`.
size_t longest_backtick_run(std::string_view text);

}  // namespace tunebench::report
