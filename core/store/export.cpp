// export_trials: the one table of formats and the dispatch to their writers.
#include "core/store/export.h"

#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

using Writer = void (*)(const std::vector<LoadedTrial>&, const std::vector<TrialFigures>&, std::ostream&);

// Invalid UTF-8 (text that reached a LoadedTrial without the store's RowReader repairing it)
// becomes U+FFFD: an export never fails on one odd byte.
void dump_json(const nlohmann::json& j, int indent, std::ostream& out) {
  out << j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void write_steps(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>&, std::ostream& out) {
  write_steps_csv(trials, out);
}
void write_json(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& figures, std::ostream& out) {
  dump_json(trials_to_json(trials, figures), 1, out);
}
void write_chrome_trace(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>&, std::ostream& out) {
  dump_json(chrome_trace(trials), -1, out);
}

struct Row {
  ExportFormatInfo info;
  Writer write;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {{ExportFormat::StepsCsv, "steps-csv", "csv", "CSV, one row per step per rank"}, write_steps},
      {{ExportFormat::SummariesCsv, "summaries-csv", "csv", "CSV, one row per rank: the run's summary"},
       write_summaries_csv},
      {{ExportFormat::Json, "json", "json", "JSON: metadata, config, summaries and steps"}, write_json},
      {{ExportFormat::ChromeTrace, "chrome-trace", "json", "Chrome trace (Perfetto): the timelines, trials stacked"},
       write_chrome_trace},
  };
  return table;
}

const Row& row_of(ExportFormat format) {
  for (const Row& r : rows())
    if (r.info.format == format) return r;
  throw StoreError("unknown export format");
}

}  // namespace

const std::vector<ExportFormatInfo>& export_formats() {
  static const std::vector<ExportFormatInfo> formats = [] {
    std::vector<ExportFormatInfo> out;
    for (const Row& r : rows()) out.push_back(r.info);
    return out;
  }();
  return formats;
}

const ExportFormatInfo& export_format_info(ExportFormat format) { return row_of(format).info; }

std::optional<ExportFormat> export_format_from_name(std::string_view name) {
  for (const Row& r : rows())
    if (r.info.name == name) return r.info.format;
  return std::nullopt;
}

void export_trials(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& figures,
                   ExportFormat format, std::ostream& out) {
  row_of(format).write(trials, figures, out);
  out.flush();
  if (!out) throw StoreError("the export could not be written");
}

}  // namespace tunebench::store
