#include "ui/models/trial_groups_model.h"

#include <algorithm>
#include <cmath>

#include <QFont>
#include <QLocale>

#include "core/config/trial_config.h"
#include "ui/models/trials_model.h"

namespace tunebench::ui {

namespace {
constexpr quintptr kGroupRow = 0;  // internalId of a group row; a leaf's is its group + 1
}

TrialGroupsModel::TrialGroupsModel(TrialsModel* source, QObject* parent)
    : QAbstractItemModel(parent), m_source(source) {
  connect(m_source, &QAbstractItemModel::modelReset, this, &TrialGroupsModel::rebuild);
  connect(m_source, &QAbstractItemModel::rowsInserted, this, &TrialGroupsModel::rebuild);
  connect(m_source, &QAbstractItemModel::rowsRemoved, this, &TrialGroupsModel::rebuild);
  connect(m_source, &QAbstractItemModel::dataChanged, this, &TrialGroupsModel::onSourceDataChanged);
  rebuild();
}

void TrialGroupsModel::setGroupKey(const QString& key) {
  m_key = key;
  rebuild();
}

QString TrialGroupsModel::valueOf(int sourceRow) const {
  if (m_key.isEmpty()) return QStringLiteral("all");
  return QString::fromStdString(config::knob_text(m_source->record(sourceRow).config, m_key.toStdString()));
}

void TrialGroupsModel::rebuild() {
  beginResetModel();
  m_groups.clear();
  for (int r = 0; r < m_source->rowCount(); ++r) {
    const QString v = valueOf(r);
    auto it = std::find_if(m_groups.begin(), m_groups.end(), [&](const Group& g) { return g.value == v; });
    if (it == m_groups.end())
      m_groups.push_back({v, {r}});
    else
      it->rows.push_back(r);
  }
  // Numeric values in numeric order (1, 2, 4, 16), others alphabetically.
  std::stable_sort(m_groups.begin(), m_groups.end(), [](const Group& a, const Group& b) {
    bool na = false, nb = false;
    const double x = a.value.toDouble(&na), y = b.value.toDouble(&nb);
    if (na && nb) return x < y;
    if (na != nb) return na;
    return a.value < b.value;
  });
  endResetModel();
}

void TrialGroupsModel::onSourceDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight) {
  // A live trial updates its row many times a second: only a change of the grouping value
  // regroups (a reset); anything else repaints the leaf and its group's figures.
  for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
    const QModelIndex leaf = indexOfSourceRow(r);
    if (!leaf.isValid() || valueOf(r) != m_groups[leaf.parent().row()].value) {
      rebuild();
      return;
    }
    emit dataChanged(leaf.siblingAtColumn(0), leaf.siblingAtColumn(TrialsModel::ColumnCount - 1));
    const QModelIndex group = leaf.parent();
    emit dataChanged(group.siblingAtColumn(0), group.siblingAtColumn(TrialsModel::ColumnCount - 1));
  }
}

int TrialGroupsModel::sourceRow(const QModelIndex& index) const {
  if (!index.isValid() || index.internalId() == kGroupRow) return -1;
  const Group& g = m_groups[int(index.internalId() - 1)];
  return g.rows.value(index.row(), -1);
}

QModelIndex TrialGroupsModel::indexOfSourceRow(int row) const {
  for (int g = 0; g < m_groups.size(); ++g) {
    const int at = int(m_groups[g].rows.indexOf(row));
    if (at >= 0) return createIndex(at, 0, quintptr(g + 1));
  }
  return {};
}

QModelIndex TrialGroupsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, kGroupRow);
  return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex TrialGroupsModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == kGroupRow) return {};
  return createIndex(int(child.internalId() - 1), 0, kGroupRow);
}

int TrialGroupsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return int(m_groups.size());
  if (parent.internalId() == kGroupRow && parent.column() == 0) return int(m_groups[parent.row()].rows.size());
  return 0;
}

int TrialGroupsModel::columnCount(const QModelIndex&) const { return TrialsModel::ColumnCount; }

QVariant TrialGroupsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  return m_source->headerData(section, orientation, role);
}

QVariant TrialGroupsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (index.internalId() == kGroupRow) return groupData(m_groups[index.row()], index.column(), role);
  const int row = sourceRow(index);
  return row < 0 ? QVariant() : m_source->data(m_source->index(row, index.column()), role);
}

QVariant TrialGroupsModel::groupData(const Group& group, int column, int role) const {
  if (role == Qt::FontRole) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::TextAlignmentRole && (column == TrialsModel::StepMs || column == TrialsModel::TokensPerS))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  const QLocale locale;
  switch (column) {
    case TrialsModel::Name: {
      const config::KnobInfo* knob = config::find_knob(m_key.toStdString());
      const QString label = knob ? QString::fromStdString(knob->label) : m_key;
      return QStringLiteral("%1 = %2").arg(label, group.value);
    }
    case TrialsModel::Status: {
      int done = 0, failed = 0;
      for (int r : group.rows) {
        done += m_source->record(r).status == protocol::TrialStatus::Done;
        failed += m_source->record(r).status == protocol::TrialStatus::Failed;
      }
      QString text = QStringLiteral("%1 trial(s)").arg(group.rows.size());
      if (failed) text += QStringLiteral(", %1 failed").arg(failed);
      return role == Qt::ToolTipRole ? text + QStringLiteral(", %1 done").arg(done) : text;
    }
    case TrialsModel::StepMs: {  // median of the trials' step times
      std::vector<double> v;
      for (int r : group.rows)
        if (!std::isnan(m_source->record(r).step_ms_median)) v.push_back(m_source->record(r).step_ms_median);
      if (v.empty()) return {};
      std::sort(v.begin(), v.end());
      const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      return role == Qt::ToolTipRole ? QStringLiteral("median over the group's trials")
                                     : QVariant(locale.toString(median, 'f', 1));
    }
    case TrialsModel::TokensPerS: {  // the group's best
      double best = std::nan("");
      for (int r : group.rows)
        if (!std::isnan(m_source->record(r).tokens_per_s))
          best = std::isnan(best) ? m_source->record(r).tokens_per_s : std::max(best, m_source->record(r).tokens_per_s);
      if (std::isnan(best)) return {};
      return role == Qt::ToolTipRole
                 ? QStringLiteral("best of the group")
                 : QVariant(QStringLiteral("best %1").arg(locale.toString(std::round(best), 'f', 0)));
    }
    default:
      return {};
  }
}

}  // namespace tunebench::ui
