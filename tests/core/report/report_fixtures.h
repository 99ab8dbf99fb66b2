// Sessions for the report tests: the recorded H200 7B trials shipped in sessions/, and a small
// session whose names, notes and tags are hostile (markup, quotes, invalid UTF-8), made the way
// the store's hostile-input tests make theirs.
#pragma once

#include <string>
#include <vector>

#include "core/store/records.h"
#include "tests/core/store/test_support.h"

namespace tunebench::report::test {

// Trials of sessions/h200-7b.tbsession by id (read-only).
std::vector<store::LoadedTrial> h200_trials(const std::vector<int64_t>& ids);
std::vector<store::LoadedTrial> all_h200_trials();

// A session in `dir` with two finished 2-rank trials: one named
// `<script>alert("x")</script> & 'co'` with hostile notes and tags, and one whose name and host
// are invalid UTF-8 (written raw, as a crafted file would hold them). Returns its path.
std::string hostile_session(const store::test::TempDir& dir);
std::vector<store::LoadedTrial> load_all(const std::string& session_path);

inline const std::string kHostileName = "<script>alert(\"x\")</script> & 'co'";
inline const std::string kHostileNotes = "</script><img src=x onerror=alert(1)>\nsecond line";

}  // namespace tunebench::report::test
