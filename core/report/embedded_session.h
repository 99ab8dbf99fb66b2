// The session a report carries: the selected trials as a compact session file (SQLite, written by
// the store like any session), deflated with zlib and base64-encoded into a data block that the
// browser never runs (<script type="application/vnd.tunebench.session+sqlite">). Reading it back
// is reading a stranger's file, so every step is bounded: the HTML's size, the block's, the
// inflated size, and then the store's defensive open (file_guard.h) of the session itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/event_log_import.h"
#include "core/store/records.h"

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::report {

// The <meta name="generator"> every report starts with; how a file is told to be a report.
inline constexpr std::string_view kGeneratorMeta = "tunebench-report 1";
inline constexpr std::string_view kDataBlockType = "application/vnd.tunebench.session+sqlite";
inline constexpr int64_t kMaxReportFileBytes = int64_t{256} << 20;       // an .html read back
inline constexpr int64_t kMaxEmbeddedSessionBytes = int64_t{1} << 30;  // the inflated session

// The data block element for `trials` (a session named `session_name`), ready to place in the
// body. Throws store::StoreError when the copy cannot be written (no temporary folder, disk full).
std::string session_data_block(const std::vector<store::LoadedTrial>& trials, const std::string& session_name);

// Whether `path` starts like a report this code wrote (the generator meta within its first 4 KiB).
bool is_report_file(const std::string& path);

struct EmbeddedSession {
  std::string session_name;
  std::vector<store::LoadedTrial> trials;  // in the order they were written
};
// The trials a report carries. `html` is the file's content. Throws store::StoreError with a
// sentence: no data block, a damaged one, one too large, or a session the store refuses.
// `max_session_bytes` bounds the inflated session (tests pass a small one).
EmbeddedSession read_embedded_session(std::string_view html, int64_t max_session_bytes = kMaxEmbeddedSessionBytes);
// The same from a file (at most kMaxReportFileBytes).
EmbeddedSession read_embedded_session_file(const std::string& path);

// `tunebench-cli import` and the GUI's Open/Import of a report: its trials, with every record,
// name, notes and tags, become trials of `target` (source "report: FILE"), in one transaction.
// Throws store::StoreError (nothing is added then).
store::ImportResult import_report(store::SessionStore& target, const std::string& html_path);

}  // namespace tunebench::report
