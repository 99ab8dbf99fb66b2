// ConfigDiffModel: the knobs that differ between compared trials, one row per knob (label from
// config::knobs(), JSON key as tooltip), one column per trial. Cells whose value differs from the
// baseline trial's are highlighted, so the eye finds the change at once.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include "core/analysis/compare.h"

namespace tunebench::ui {

class ConfigDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role { KeyRole = Qt::UserRole + 1, DiffersFromBaselineRole };

  explicit ConfigDiffModel(QObject* parent = nullptr);
  void setComparison(const analysis::Comparison& comparison, const QStringList& trialNames);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // JSON keys of the rows, in order (for tests and the sweep).
  QStringList keys() const;

 private:
  std::vector<analysis::KnobDiff> m_diff;
  QStringList m_names;
  size_t m_baseline = 0;
};

}  // namespace tunebench::ui
