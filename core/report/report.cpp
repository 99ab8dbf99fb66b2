#include "core/report/report.h"

#include <stdexcept>

#include "core/report/embedded_session.h"
#include "core/report/html_report.h"
#include "core/report/markdown_report.h"
#include "core/report/report_contents.h"

namespace tunebench::report {

void write_report(const std::vector<store::LoadedTrial>& trials, ReportFormat format, std::ostream& out,
                  const ReportOptions& options) {
  const ReportContents contents = make_contents(trials, options);
  if (format == ReportFormat::Markdown) {
    write_markdown(contents, out);
    return;
  }
  write_html(contents, options.embed_session ? session_data_block(trials, contents.title) : std::string(), out);
}

std::optional<ReportFormat> report_format_from_string(const std::string& name) {
  if (name == "html") return ReportFormat::Html;
  if (name == "markdown" || name == "md") return ReportFormat::Markdown;
  return std::nullopt;
}

}  // namespace tunebench::report
