// MetricsModel: the key metrics of compared trials. One row per metric (analysis::compare's rows
// plus scaling efficiency); columns: metric, one column per trial with "median (IQR p25–p75)",
// then for each non-baseline trial its delta and ratio to the baseline. Ratios are coloured by
// whether the metric got better or worse, so step time and throughput cannot be misread; a ratio
// within the noise (analysis::standing, the report's rule too: the quartile ranges overlap, or a
// time too small against the step) is not coloured.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include "core/analysis/compare.h"

namespace tunebench::ui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role { KeyRole = Qt::UserRole + 1, MedianRole, RatioRole };

  explicit MetricsModel(QObject* parent = nullptr);
  void setComparison(const analysis::Comparison& comparison, const QStringList& trialNames);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // Row of a metric key ("step_ms", "scaling_efficiency_pct"), -1 when absent.
  int rowOf(const QString& key) const;
  // Column of trial i's value, and of its delta / ratio (-1 for the baseline).
  int valueColumn(int trial) const { return 1 + trial; }
  int deltaColumn(int trial) const;
  int ratioColumn(int trial) const;

 private:
  QString cellText(const analysis::MetricRow& row, int column) const;

  std::vector<analysis::MetricRow> m_rows;
  QStringList m_names;
  size_t m_baseline = 0;
  std::vector<int> m_others;  // trial indices other than the baseline, in order
};

// A trial name for a column header: broken at spaces into lines of about `width` characters, so
// three long names ("7B DDP x2, checkpointing, NCCL_P2P_DISABLE=1") fit the window side by side.
QString wrap_header(const QString& name, int width = 22);

// "1,500.0" / "5,461": the precision a metric's unit deserves.
QString format_metric(double value, const std::string& unit);

}  // namespace tunebench::ui
