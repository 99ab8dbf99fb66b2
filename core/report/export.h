// Exporting trials for other tools, with each trial's own figures: the formats of
// store::export_trials (CSV, JSON, Chrome trace), the figures (step time, throughput,
// communication, data wait; store::TrialFigures) computed here with the analysis, above the store.
// The GUI's exports (SessionController) and `tunebench-cli export` both call export_trials, so a
// format is written one way whoever asks.
#pragma once

#include <ostream>
#include <vector>

#include "core/store/export.h"
#include "core/store/records.h"

namespace tunebench::report {

// The trial's figures as the comparison, the trials table and the report show them (the medians
// of analysis::analyze); a figure the trial does not have (no measured steps, unknown tokens, one
// rank's communication) is empty.
store::TrialFigures trial_figures(const store::LoadedTrial& trial);

// store::export_trials with every trial's figures. Throws store::StoreError when the stream fails.
void export_trials(const std::vector<store::LoadedTrial>& trials, store::ExportFormat format, std::ostream& out);

}  // namespace tunebench::report
