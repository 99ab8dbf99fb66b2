// Fuzz target: bytes as a Tunebench HTML report from a stranger, read back the way
// `tunebench-cli import` and the GUI's Open/Import do (core/report/embedded_session.h): the data
// block found, base64-decoded, inflated (bounded) and opened as a session by the store's defensive
// open. Whatever it yields is then rendered again as a report (HTML and Markdown), since a crafted
// session's names and numbers reach the renderers too. Every failure must be a StoreError.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "core/report/embedded_session.h"
#include "core/report/report.h"
#include "core/store/store_error.h"

namespace tr = tunebench::report;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto embedded = tr::read_embedded_session(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!embedded.trials.empty()) {
      std::ostringstream sink;
      tr::ReportOptions options;
      options.embed_session = false;
      tr::write_report(embedded.trials, tr::ReportFormat::Html, sink, options);
      tr::write_report(embedded.trials, tr::ReportFormat::Markdown, sink, options);
    }
  } catch (const tunebench::store::StoreError&) {
    // refused or damaged: the expected outcome for most inputs
  }
  return 0;
}
