// The HTML report (report.h): one self-contained file, inline CSS and SVG, no script.
// Internal to core/report; callers use write_report.
#pragma once

#include <ostream>
#include <string>

#include "core/report/report_contents.h"

namespace tunebench::report {

// `data_block`: the embedded session element (embedded_session.h), or "" for none.
void write_html(const ReportContents& contents, const std::string& data_block, std::ostream& out);

}  // namespace tunebench::report
