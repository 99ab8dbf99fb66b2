// The Markdown summary (report.h) for a GitHub issue or a forum post: the verdict, one table, the
// breakdown as text bars, the top finding of each comparison and the command lines, in at most
// kMaxMarkdownLines lines. Internal to core/report; callers use write_report.
#pragma once

#include <ostream>

#include "core/report/report_contents.h"

namespace tunebench::report {

inline constexpr size_t kMaxMarkdownLines = 60;

void write_markdown(const ReportContents& contents, std::ostream& out);

}  // namespace tunebench::report
