// SweepTableModel: analysis::sweep_table as a table: the swept knobs' values, then repeats, step
// time, tokens/s per GPU and total, MFU, exposed communication and peak memory. Failed points
// (no measured step, e.g. out of memory) are shown red, not left out.
#pragma once

#include <QAbstractTableModel>

#include "core/analysis/sweep.h"

namespace tunebench::ui {

class SweepTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  // Metric columns after the swept knobs' columns.
  enum Metric { Repeats, StepMs, TokensPerGpu, TokensTotal, Mfu, ExposedComm, PeakGiB, TokensPerJoule, MetricCount };
  enum Role { ValueRole = Qt::UserRole + 1 };  // the metric's median as a number

  explicit SweepTableModel(QObject* parent = nullptr);
  void setTable(const analysis::SweepTable& table);
  const analysis::SweepTable& table() const { return m_table; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  static QString metricName(Metric metric);  // with its unit
  // The row's value of a metric (NaN when unknown) and its quartiles (equal to it without spread).
  static double metricValue(const analysis::SweepRow& row, Metric metric, double* p25 = nullptr, double* p75 = nullptr);

 private:
  analysis::SweepTable m_table;
};

}  // namespace tunebench::ui
