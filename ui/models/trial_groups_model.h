// TrialGroupsModel: the trials table grouped by one knob, as W&B groups runs: one parent row per
// value of the knob ("strategy = ddp · 3 trials"), with the group's best throughput and the median
// of its trials' step times, and the trials under it with the table's own columns. It only adapts
// TrialsModel (the source of truth); leaves map back to its rows.
#pragma once

#include <QAbstractItemModel>
#include <QString>
#include <QVector>

namespace tunebench::ui {

class TrialsModel;

class TrialGroupsModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  explicit TrialGroupsModel(TrialsModel* source, QObject* parent = nullptr);

  // A config key of config::knobs() ("strategy", "world_size", ...); empty: one group of all.
  void setGroupKey(const QString& key);
  QString groupKey() const { return m_key; }
  int groupCount() const { return int(m_groups.size()); }
  QString groupValue(int group) const { return m_groups.value(group).value; }
  // The source row of a leaf, -1 for a group row; and the leaf of a source row.
  int sourceRow(const QModelIndex& index) const;
  QModelIndex indexOfSourceRow(int row) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Group {
    QString value;
    QVector<int> rows;  // source rows
  };
  void rebuild();
  QString valueOf(int sourceRow) const;
  QVariant groupData(const Group& group, int column, int role) const;
  void onSourceDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight);

  TrialsModel* m_source;
  QString m_key;
  QVector<Group> m_groups;
};

}  // namespace tunebench::ui
