// RangeSummaryModel: the selected span of the timeline as a table, one row per phase: count,
// total and mean time in the span, and its share of the span (ranks shown x span length). It
// adapts a RangeSummary (timeline_range_summary.h) and computes nothing itself.
#pragma once

#include <QAbstractTableModel>

#include "ui/plots/timeline_range_summary.h"

namespace tunebench::ui {

class RangeSummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Phase, Count, TotalMs, MeanMs, Share, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1 };

  explicit RangeSummaryModel(QObject* parent = nullptr);
  void setSummary(const RangeSummary& summary);
  const RangeSummary& summary() const { return m_summary; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  RangeSummary m_summary;
};

}  // namespace tunebench::ui
