// StepComparePlot: one representative measured step of each compared trial (the step whose time
// is closest to the median), drawn on one time axis starting at each step's start, rows per trial,
// rank and lane, bars coloured by phase as in the live timeline. A step of 1.2 s and one of 1.5 s
// then show at a glance where the extra 300 ms sit (an exposed all-reduce after backward, a data
// wait before forward).
#pragma once

#include <vector>

#include <QStringList>

#include "core/protocol/trial_log.h"
#include "ui/plots/live_plot.h"

namespace tunebench::ui {

class StepComparePlot : public LivePlot {
  Q_OBJECT
 public:
  static constexpr int kMaxRanks = 4;  // more ranks than this would squeeze every row flat

  explicit StepComparePlot(QWidget* parent = nullptr);

  // `steps[i]` is the step index to draw for logs[i] (-1: none, the trial gets an empty row).
  void setSteps(const QStringList& names, const std::vector<const protocol::TrialLog*>& logs,
                const std::vector<int64_t>& steps);

  int barCount() const { return m_barCount; }
  int rowCount() const { return m_rowCount; }
  // Duration of the drawn step of trial i in ms (the slowest rank's), 0 when none was drawn.
  double stepDuration_ms(int trial) const {
    return trial >= 0 && size_t(trial) < m_steps_ms.size() ? m_steps_ms[size_t(trial)] : 0.0;
  }

 protected:
  // Puts each "step N: … ms" label inside the plot: left of its end mark when it fits, else right.
  void beforeReplot() override;

 private:
  std::vector<QCPItemText*> m_endLabels;
  int m_barCount = 0;
  int m_rowCount = 0;
  std::vector<double> m_steps_ms;
};

}  // namespace tunebench::ui
