#include "ui/models/config_diff_model.h"

#include "ui/models/metrics_model.h"
#include "ui/models/status_colors.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace tunebench::ui {

ConfigDiffModel::ConfigDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void ConfigDiffModel::setComparison(const analysis::Comparison& comparison, const QStringList& trialNames) {
  beginResetModel();
  m_diff = comparison.config_diff;
  m_names = trialNames;
  m_baseline = comparison.baseline;
  endResetModel();
}

int ConfigDiffModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_diff.size()); }

int ConfigDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_names.size()); }

QVariant ConfigDiffModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const analysis::KnobDiff& d = m_diff[size_t(index.row())];
  const size_t col = size_t(index.column());
  const QString value = col < d.values.size() ? QString::fromStdString(d.values[col]) : QString();
  const bool differs = col != m_baseline && m_baseline < d.values.size() && col < d.values.size() &&
                       d.values[col] != d.values[m_baseline];
  switch (role) {
    case Qt::DisplayRole:
      return value.isEmpty() ? QStringLiteral("–") : value;
    case Qt::ToolTipRole:
      return QStringLiteral("%1 (%2)").arg(QString::fromStdString(d.label), QString::fromStdString(d.key));
    case Qt::BackgroundRole:
      return differs ? QBrush(changed_background()) : QVariant();
    case Qt::ForegroundRole:
      return differs ? QBrush(changed_foreground()) : QVariant();
    case Qt::FontRole:
      if (differs) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::TextAlignmentRole:
      return int(Qt::AlignRight | Qt::AlignVCenter);
    case KeyRole:
      return QString::fromStdString(d.key);
    case DiffersFromBaselineRole:
      return differs;
    default:
      return {};
  }
}

QVariant ConfigDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  if (orientation == Qt::Horizontal) {
    if (section < 0 || section >= m_names.size()) return {};
    if (role == Qt::ToolTipRole) return m_names[section];
    return QStringLiteral("#%1 ").arg(section + 1) + wrap_header(m_names[section]) +
           (size_t(section) == m_baseline ? QStringLiteral("\n(baseline)") : QString());
  }
  if (section < 0 || size_t(section) >= m_diff.size()) return {};
  return role == Qt::DisplayRole ? QString::fromStdString(m_diff[size_t(section)].label)
                                 : QString::fromStdString(m_diff[size_t(section)].key);
}

QStringList ConfigDiffModel::keys() const {
  QStringList keys;
  for (const auto& d : m_diff) keys << QString::fromStdString(d.key);
  return keys;
}

}  // namespace tunebench::ui
