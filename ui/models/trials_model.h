// TrialsModel: the trials table. Rows are TrialRecords; the model only adapts them.
// Failed trials are drawn red with their reason; the reason and stderr tail are the tooltip.
// Colours come from the palette (readable in light and dark themes).
#pragma once

#include <QAbstractTableModel>
#include <QVector>

#include "ui/models/trial_record.h"

namespace tunebench::ui {

class TrialsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Status, Strategy, Ranks, Model, Progress, StepMs, TokensPerS, Tags, Notes, Reason, ColumnCount };
  enum Role { TrialIdRole = Qt::UserRole + 1, StatusRole };

  explicit TrialsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // Adds a row (or replaces the row with the same id); returns its row.
  int upsert(const TrialRecord& record);
  // Row of a trial id, -1 when absent.
  int rowOf(const QString& id) const;
  const TrialRecord& record(int row) const { return m_records.at(row); }
  TrialRecord* find(const QString& id);
  // Emits dataChanged for the row of `id` after the record was changed through find().
  void touch(const QString& id);
  void removeTrial(const QString& id);
  void clear();

 private:
  QVector<TrialRecord> m_records;
};

}  // namespace tunebench::ui
