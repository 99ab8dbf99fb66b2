// Exporting trials for other tools: CSV and JSON tables, and the Chrome trace event format.
//
// export_trials is the one writer: it picks the format's writer from one table (export_formats());
// a new format is an ExportFormat, a row and a writer. The GUI's exports (SessionController) and
// `tunebench-cli export` reach it through report::export_trials (core/report/export.h), which
// computes each trial's own figures (TrialFigures) with the analysis, above the store: so a format
// is written one way whoever asks, and the store links no analysis. The writers are pure functions
// from loaded trials to text, so tests check them without files. JSON text (the JSON table and
// Chrome traces) is dumped with invalid UTF-8 replaced by U+FFFD, never thrown on. CSV text fields
// are quoted and guarded against spreadsheet formula injection (a trial name from a shared file must
// not run as a formula). This unit computes nothing: summaries are the workers' done events, the
// trial figures are handed in.
#pragma once

#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/records.h"

namespace tunebench::store {

// A trial's own figures, exported beside each rank's summary (the summaries CSV's trial_* columns,
// the JSON's "metrics"): the analysis' definitions, the numbers the comparison, the trials table
// and the report show (core/report/export.h: trial_figures). Empty: the trial does not have it (no
// steps, unknown tokens, one rank's communication): a blank cell, null.
struct TrialFigures {
  std::optional<double> step_ms;
  std::optional<double> tokens_per_s;  // all ranks together (the JSON's tokens_per_s_total)
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> comm_ms;
  std::optional<double> exposed_comm_ms;
  std::optional<double> data_wait_ms;
  std::optional<double> joules_per_step;   // all GPUs, per step (NVML's energy counter)
  std::optional<double> tokens_per_joule;  // all ranks' tokens over all GPUs' energy
};

enum class ExportFormat {
  StepsCsv,      // write_steps_csv
  SummariesCsv,  // write_summaries_csv
  Json,          // trials_to_json
  ChromeTrace,   // chrome_trace of one or several trials
};

struct ExportFormatInfo {
  ExportFormat format;
  std::string_view name;         // "steps-csv", "summaries-csv", "json", "chrome-trace"
  std::string_view extension;    // of the file it is usually written to: "csv", "json"
  std::string_view description;  // for menus and --help
};

// Every format, in menu order.
const std::vector<ExportFormatInfo>& export_formats();
const ExportFormatInfo& export_format_info(ExportFormat format);
std::optional<ExportFormat> export_format_from_name(std::string_view name);

// Writes `trials` (in the order given) to `out` in `format` and flushes; `figures`: each trial's
// own figures, parallel to `trials` (missing entries: none known). Throws StoreError when the
// stream fails. No trials: the tables' headers, an empty trial list or an empty trace.
void export_trials(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& figures,
                   ExportFormat format, std::ostream& out);

// ---- the writers export_trials picks from --------------------------------------------------------

// One row per step per rank per trial (the per-step table), with a header row.
void write_steps_csv(const std::vector<LoadedTrial>& trials, std::ostream& out);
// One row per rank per trial: metadata, the rank's done summary (empty cells if none) and the
// trial's own figures (trial_step_ms, ...; `figures` parallel to `trials`).
void write_summaries_csv(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& figures,
                         std::ostream& out);

// {"format":"tunebench-trials","version":1,"trials":[{metadata, config, ranks:[{env, summary,
// steps:[...]}], metrics}]}: summaries, the per-step table and the trial's figures together.
nlohmann::json trials_to_json(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& figures);

// A trial's timeline in the Chrome trace event format (Perfetto, chrome://tracing): one process
// per rank (pid = rank, named "rank N"), one thread per lane (tid 1 host, 2 compute, 3 comm),
// one complete event ("ph":"X") per interval with ts/dur in microseconds since the trial's first
// interval, on rank 0's clock (each rank's clock_offset_us applied). Args carry step, label,
// bytes and bus bandwidth.
nlohmann::json chrome_trace(const LoadedTrial& trial);
// Several trials in one trace: one process per trial and rank ("NAME · rank N", pid 1000 * i +
// rank), so Perfetto shows the trials one under another on a common time axis (each trial's own
// times start at 0). Trials in the order given, ranks in order within each. One trial: exactly
// chrome_trace(trial).
nlohmann::json chrome_trace(const std::vector<LoadedTrial>& trials);

}  // namespace tunebench::store
