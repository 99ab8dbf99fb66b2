// SweepPlot: a metric of a sweep against the first swept knob, one line per combination of the
// other knobs' values, with the interquartile range as error bars (repeats pooled). Numeric knob
// values are placed on a numeric axis; others (strategy, amp) on evenly spaced text ticks.
#pragma once

#include "ui/models/sweep_table_model.h"
#include "ui/plots/live_plot.h"

namespace tunebench::ui {

class SweepPlot : public LivePlot {
  Q_OBJECT
 public:
  explicit SweepPlot(QWidget* parent = nullptr);

  void setTable(const analysis::SweepTable& table, SweepTableModel::Metric metric);
  // Points plotted over all series (failed points have no value and are not drawn).
  int pointCount() const;

 private:
  QList<QCPGraph*> m_graphs;
};

}  // namespace tunebench::ui
