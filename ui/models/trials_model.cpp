#include "ui/models/trials_model.h"

#include <QFileInfo>

#include "core/config/script.h"

#include "ui/models/status_colors.h"

#include <algorithm>
#include <cmath>

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace tunebench::ui {

QString to_display_string(protocol::TrialStatus status) {
  return QString::fromUtf8(protocol::to_string(status).data());
}

QString ranks_held(int stored, int world) {
  world = std::max(stored, world);
  return stored > 0 && stored < world ? QStringLiteral("%1 of %2").arg(stored).arg(world) : QString::number(world);
}

TrialsModel::TrialsModel(QObject* parent) : QAbstractTableModel(parent) {}

int TrialsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_records.size()); }
int TrialsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TrialsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name:
      return QStringLiteral("Trial");
    case Status:
      return QStringLiteral("Status");
    case Strategy:
      return QStringLiteral("Strategy");
    case Ranks:
      return QStringLiteral("Ranks");
    case Model:
      return QStringLiteral("Model");
    case Progress:
      return QStringLiteral("Steps");
    case StepMs:
      return QStringLiteral("Step ms\n(median)");  // two lines: the table fits without sideways scrolling
    case TokensPerS:
      return QStringLiteral("Tokens/s\n(all ranks)");
    case Tags:
      return QStringLiteral("Tags");
    case Notes:
      return QStringLiteral("Notes");
    case Reason:
      return QStringLiteral("Reason");
  }
  return {};
}

QVariant TrialsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const TrialRecord& r = m_records.at(index.row());
  const bool failed = r.status == protocol::TrialStatus::Failed;
  switch (role) {
    case TrialIdRole:
      return r.id;
    case StatusRole:
      return int(r.status);
    case Qt::BackgroundRole:
      if (failed) return QBrush(failed_row_background());
      return {};
    case Qt::ForegroundRole:
      if (failed) return QBrush(failed_row_foreground());
      return {};
    case Qt::ToolTipRole:
      if (index.column() == Notes && !r.notes.isEmpty()) return r.notes;
      if (index.column() == Ranks && r.ranks_stored > 0 && r.ranks_stored < r.ranks_world)
        return QStringLiteral("%1 of the run's %2 ranks were imported; the trial shows only those")
            .arg(r.ranks_stored)
            .arg(r.ranks_world);
      if (index.column() == Name && r.reason.isEmpty()) return QString::fromStdString(r.config.name);  // when elided
      if (r.reason.isEmpty()) return {};
      return r.stderr_tail.isEmpty() ? r.reason
                                     : r.reason + QStringLiteral("\n\nstderr (last lines):\n") + r.stderr_tail;
    case Qt::TextAlignmentRole:
      if (index.column() == Ranks || index.column() == StepMs || index.column() == TokensPerS ||
          index.column() == Progress)
        return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::DisplayRole:
      break;
    default:
      return {};
  }
  const QLocale locale;
  switch (index.column()) {
    case Name: {
      const QString name = r.config.name.empty() ? r.id : QString::fromStdString(r.config.name);
      return r.replay ? name + QStringLiteral(" (replay)") : name;
    }
    case Status:
      return to_display_string(r.status);
    case Strategy:  // a script wraps its model itself: not a knob of the trial
      if (config::is_script(r.config)) return QStringLiteral("script");
      return r.strategy_known ? QString::fromUtf8(config::to_string(r.config.strategy).data()) : QStringLiteral("unknown");
    case Ranks:  // what is stored: "1 of 2" for a trace import of one rank of two
      return r.ranks_stored > 0 ? ranks_held(r.ranks_stored, r.ranks_world) : QString::number(r.config.world_size);
    case Model:
      return config::is_script(r.config) ? QFileInfo(QString::fromStdString(r.config.script)).fileName()
                                         : QString::fromStdString(r.config.model);
    case Progress:
      return QStringLiteral("%1 / %2").arg(r.step).arg(r.steps);
    case StepMs:
      return std::isnan(r.step_ms_median) ? QString() : locale.toString(r.step_ms_median, 'f', 1);
    case TokensPerS:
      if (std::isnan(r.tokens_per_s))  // a CNN's samples/s, named: the column's unit is tokens
        return std::isnan(r.samples_per_s)
                   ? QString()
                   : QStringLiteral("%1 samples/s").arg(locale.toString(std::round(r.samples_per_s), 'f', 0));
      return locale.toString(std::round(r.tokens_per_s), 'f', 0);
    case Tags:
      return r.tags.join(QStringLiteral(", "));
    case Notes:
      return r.notes.section(QLatin1Char('\n'), 0, 0);
    case Reason:
      return r.reason.section('\n', 0, 0);
  }
  return {};
}

int TrialsModel::upsert(const TrialRecord& record) {
  const int row = rowOf(record.id);
  if (row >= 0) {
    m_records[row] = record;
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    return row;
  }
  beginInsertRows({}, int(m_records.size()), int(m_records.size()));
  m_records.push_back(record);
  endInsertRows();
  return int(m_records.size()) - 1;
}

int TrialsModel::rowOf(const QString& id) const {
  for (int i = 0; i < m_records.size(); ++i)
    if (m_records[i].id == id) return i;
  return -1;
}

TrialRecord* TrialsModel::find(const QString& id) {
  const int row = rowOf(id);
  return row < 0 ? nullptr : &m_records[row];
}

void TrialsModel::touch(const QString& id) {
  const int row = rowOf(id);
  if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void TrialsModel::removeTrial(const QString& id) {
  const int row = rowOf(id);
  if (row < 0) return;
  beginRemoveRows({}, row, row);
  m_records.removeAt(row);
  endRemoveRows();
}

void TrialsModel::clear() {
  beginResetModel();
  m_records.clear();
  endResetModel();
}

}  // namespace tunebench::ui
