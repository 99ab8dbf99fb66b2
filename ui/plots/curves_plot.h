// CurvesPlot: the step time and the loss of several trials against the step, one line per trial
// on shared axes (W&B's overlaid run curves): a slower warm-up, a drifting step time or a loss
// that diverges after a precision change show at once. A trial's step time at a step is its
// slowest rank's and its loss the mean over ranks (analysis::step_curve). The step-time axis
// is scaled to the measured steps; warm-up steps are drawn dotted.
#pragma once

#include <vector>

#include <QStringList>

#include "core/protocol/trial_log.h"
#include "ui/plots/live_plot.h"

namespace tunebench::ui {

class CurvesPlot : public LivePlot {
  Q_OBJECT
 public:
  explicit CurvesPlot(QWidget* parent = nullptr);

  void setTrials(const QStringList& names, const std::vector<const protocol::TrialLog*>& logs);
  int curveCount() const { return int(m_stepGraphs.size()); }
  // Points of trial i's step-time (panel 0) or loss (panel 1) curve, warm-up included.
  int points(int trial, int panel) const;
  QCPAxisRect* stepRect() const { return m_stepRect; }
  QCPAxisRect* lossRect() const { return m_lossRect; }

 private:
  QCPAxisRect* m_stepRect = nullptr;
  QCPAxisRect* m_lossRect = nullptr;
  std::vector<std::pair<QCPGraph*, QCPGraph*>> m_stepGraphs;  // measured, warm-up
  std::vector<QCPGraph*> m_lossGraphs;
};

}  // namespace tunebench::ui
