#include "core/report/export.h"

#include "core/analysis/trial_metrics.h"

namespace tunebench::report {

store::TrialFigures trial_figures(const store::LoadedTrial& trial) {
  store::TrialFigures f;
  const analysis::TrialMetrics m = analysis::analyze(trial.log);
  if (m.measured_steps == 0) return f;
  f.step_ms = m.step_ms.median;
  if (m.tokens_per_s_total.n > 0) {
    f.tokens_per_s = m.tokens_per_s_total.median;
    f.tokens_per_s_per_gpu = m.tokens_per_s_per_gpu.median;
  }
  if (m.comm_ms.n > 0 && m.world_size > 1) {
    f.comm_ms = m.comm_ms.median;
    f.exposed_comm_ms = m.exposed_comm_ms.median;
  }
  f.data_wait_ms = m.data_wait_ms.median;
  f.joules_per_step = m.joules_per_step;
  f.tokens_per_joule = m.tokens_per_joule;
  return f;
}

void export_trials(const std::vector<store::LoadedTrial>& trials, store::ExportFormat format, std::ostream& out) {
  std::vector<store::TrialFigures> figures;
  // The steps table and the trace show no trial figures: the analysis runs only where they do.
  if (format == store::ExportFormat::SummariesCsv || format == store::ExportFormat::Json)
    for (const auto& t : trials) figures.push_back(trial_figures(t));
  store::export_trials(trials, figures, format, out);
}

}  // namespace tunebench::report
