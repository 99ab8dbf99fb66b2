// Reports of stored trials for people who do not have Tunebench: one self-contained HTML file and
// a Markdown summary for a GitHub issue or forum post.
//
// The HTML report reads in the order a reader needs it: the verdict in one sentence, the config
// diff, metrics with their spread, the phase breakdown, step time per step, a few steps of every
// rank's timeline, telemetry, the diagnosis, the environment and how to reproduce each trial. It
// fetches nothing and runs no script (a Content-Security-Policy says so), has light and dark
// colours, fits a phone and prints. It carries the trials themselves (embedded_session.h), so
// `tunebench-cli import` and the GUI's File > Open restore them from the .html.
// Every figure comes from core/analysis, as in the comparison window and `tunebench-cli report`.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/store/records.h"

namespace tunebench::report {

enum class ReportFormat { Html, Markdown };

struct ReportOptions {
  std::string title;                // default: the trials' names
  std::optional<size_t> baseline;   // index among the compared (pooled) trials; default as make_report
  bool embed_session = true;        // HTML: carry the trials (off: a report to read only)
};

// Throws store::StoreError when the embedded copy cannot be written; std::invalid_argument when
// `trials` is empty.
void write_report(const std::vector<store::LoadedTrial>& trials, ReportFormat format, std::ostream& out,
                  const ReportOptions& options = {});

// "html" / "markdown" (also "md") -> the format; nullopt for anything else.
std::optional<ReportFormat> report_format_from_string(const std::string& name);

}  // namespace tunebench::report
