#include "ui/plots/range_summary_model.h"

#include <QBrush>
#include <QLocale>

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

RangeSummaryModel::RangeSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void RangeSummaryModel::setSummary(const RangeSummary& summary) {
  beginResetModel();
  m_summary = summary;
  endResetModel();
}

int RangeSummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_summary.phases.size());
}
int RangeSummaryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RangeSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Phase:
      return QStringLiteral("Phase");
    case Count:
      return QStringLiteral("Count");
    case TotalMs:
      return QStringLiteral("Total (ms)");
    case MeanMs:
      return QStringLiteral("Mean (ms)");
    case Share:
      return QStringLiteral("Share of span");
  }
  return {};
}

QVariant RangeSummaryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const PhaseSummary& p = m_summary.phases[size_t(index.row())];
  if (role == Qt::DecorationRole && index.column() == Phase) return phase_color(p.phase);
  if (role == Qt::TextAlignmentRole && index.column() != Phase) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == SortRole) {
    switch (index.column()) {
      case Phase:
        return phase_name(p.phase);
      case Count:
        return p.count;
      case TotalMs:
        return p.total_s;
      case MeanMs:
        return p.mean_s;
      case Share:
        return p.share;
    }
  }
  if (role == Qt::ToolTipRole)
    return QStringLiteral("%1: %2 interval(s) overlap the span; their time inside it adds up to %3 ms over %4 rank(s)")
        .arg(phase_name(p.phase))
        .arg(p.count)
        .arg(p.total_s * 1e3, 0, 'f', 3)
        .arg(m_summary.ranks);
  if (role != Qt::DisplayRole) return {};
  const QLocale locale;
  switch (index.column()) {
    case Phase:
      return phase_name(p.phase);
    case Count:
      return locale.toString(p.count);
    case TotalMs:
      return locale.toString(p.total_s * 1e3, 'f', p.total_s < 0.1 ? 3 : 1);
    case MeanMs:
      return locale.toString(p.mean_s * 1e3, 'f', p.mean_s < 0.1 ? 3 : 1);
    case Share:
      return QStringLiteral("%1 %").arg(locale.toString(p.share * 100, 'f', 1));
  }
  return {};
}

}  // namespace tunebench::ui
