// BreakdownPlot: where the step time goes, one stacked bar per trial. The parts are the analysis'
// phase breakdown (mean ms per measured step on the critical rank), which add up to the mean step
// time exactly, so the top of each bar is the mean step, labelled "mean"; beside it the median
// step the metrics show, labelled "median", so the two numbers never look like one that
// disagrees. Trial names under the bars break between words (a word wider than its bar after its
// '_' and '='), on up to four lines as wide as a bar's share of the axis, in a smaller font (down to
// 80 %) where a piece that cannot break is wider. Legend under the plot, ms axis.
#pragma once

#include <vector>

#include <QFontMetrics>
#include <QStringList>

#include "core/analysis/trial_metrics.h"
#include "ui/plots/live_plot.h"

namespace tunebench::ui {

class BreakdownPlot : public LivePlot {
  Q_OBJECT
 public:
  explicit BreakdownPlot(QWidget* parent = nullptr);

  // `medianSteps`: each trial's median step time (ms), shown beside the bar's mean (optional).
  void setTrials(const QStringList& names, const std::vector<analysis::MeanBreakdown>& breakdowns,
                 const std::vector<double>& medianSteps = {});

  // The bars of one part (nullptr when the part is zero in every trial and therefore not drawn).
  QCPBars* bars(analysis::Part part) const;
  // Sum of the plotted part values of trial i, read back from the plot's data (tests).
  double stackedSum(int trial) const;
  int trialCount() const { return int(m_steps.size()); }

  static QColor partColor(analysis::Part part);
  // A bar's name on at most four lines no wider than `width` pixels, broken between words, and a
  // word wider than a line after its '_' and '='; what does not fit ends in "…" (tests).
  static QString wrapLabel(const QString& name, double width, const QFontMetrics& metrics);

 protected:
  void beforeReplot() override;

 private:
  // The names under the bars, wrapped to a bar's share of the axis (at most about 18 characters)
  // when it changed.
  void wrapLabels();
  // The figures above the bars: where two neighbours would touch (bars of about the same height),
  // the right one goes above the left one, and the value axis grows to hold the highest.
  void placeFigures();

  QStringList m_labels;  // "#1 name" per bar
  QFont m_labelFont;     // the axis' own tick label font
  double m_labelWidth = -1;
  std::vector<std::pair<analysis::Part, QCPBars*>> m_bars;
  std::vector<double> m_steps;
  std::vector<QCPItemText*> m_figures;  // "mean … (median …)" above each bar
};

}  // namespace tunebench::ui
