// Bounds on what the store writes and accepts back: string lengths and file sizes.
//
// A session file may come from anyone, so every string read from it is bounded before it reaches
// the UI, and every string we write is bounded too, so our own files always pass our own checks.
// This header deliberately holds only constants and the text helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tunebench::store {

inline constexpr size_t kMaxNameBytes = 256;          // session and trial names
inline constexpr size_t kMaxTagBytes = 64;            // one tag
inline constexpr size_t kMaxTagsPerTrial = 64;
inline constexpr size_t kMaxNotesBytes = 256u << 10;  // free-text notes
inline constexpr size_t kMaxShortTextBytes = 4096;    // host, versions, labels, kinds, levels
inline constexpr size_t kMaxMessageBytes = 1u << 20;  // one log / warning / error message
inline constexpr size_t kMaxJsonBytes = 4u << 20;     // a config or error-details JSON document
// SQLite's per-value limit on connections to session files (sqlite3_limit LENGTH): anything larger
// stored in a file makes the read fail with a StoreError instead of allocating it.
inline constexpr int kSqliteMaxValueBytes = 16 << 20;
inline constexpr int64_t kDefaultMaxFileBytes = int64_t{8} << 30;

// The longest prefix of `text` of at most `max_bytes` bytes that does not cut a UTF-8 sequence.
std::string bounded(std::string_view text, size_t max_bytes);
// `text` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD, so a
// crafted file's text can go into JSON exports and widgets.
std::string valid_utf8(std::string_view text);

}  // namespace tunebench::store
