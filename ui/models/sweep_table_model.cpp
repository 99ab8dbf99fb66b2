#include "ui/models/sweep_table_model.h"

#include "ui/models/status_colors.h"

#include <cmath>

#include <QBrush>
#include <QColor>

#include "ui/models/metrics_model.h"

namespace tunebench::ui {

SweepTableModel::SweepTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SweepTableModel::setTable(const analysis::SweepTable& table) {
  beginResetModel();
  m_table = table;
  endResetModel();
}

int SweepTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_table.rows.size());
}

int SweepTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_table.keys.size()) + MetricCount;
}

QString SweepTableModel::metricName(Metric metric) {
  switch (metric) {
    case Repeats:
      return QStringLiteral("repeats");
    case StepMs:
      return QStringLiteral("step time (ms)");
    case TokensPerGpu:
      return QStringLiteral("tokens/s per GPU");
    case TokensTotal:
      return QStringLiteral("tokens/s total");
    case Mfu:
      return QStringLiteral("MFU (%)");
    case ExposedComm:
      return QStringLiteral("exposed comm (ms)");
    case PeakGiB:
      return QStringLiteral("peak memory (GiB)");
    case TokensPerJoule:
      return QStringLiteral("tokens per joule");
    case MetricCount:
      break;
  }
  return {};
}

double SweepTableModel::metricValue(const analysis::SweepRow& row, Metric metric, double* p25, double* p75) {
  auto spread = [&](const analysis::Spread& s) {
    if (s.n == 0) return std::nan("");
    if (p25) *p25 = s.p25;
    if (p75) *p75 = s.p75;
    return s.median;
  };
  auto single = [&](double v) {
    if (p25) *p25 = v;
    if (p75) *p75 = v;
    return v;
  };
  switch (metric) {
    case Repeats:
      return single(row.repeats);
    case StepMs:
      return spread(row.step_ms);
    case TokensPerGpu:
      return spread(row.tokens_per_s_per_gpu);
    case TokensTotal:
      return spread(row.tokens_per_s_total);
    case Mfu:
      return row.mfu ? single(*row.mfu * 100.0) : std::nan("");
    case ExposedComm:
      return spread(row.exposed_comm_ms);
    case PeakGiB:
      return row.peak_bytes > 0 ? single(double(row.peak_bytes) / (1024.0 * 1024.0 * 1024.0)) : std::nan("");
    case TokensPerJoule:
      return row.tokens_per_joule ? single(*row.tokens_per_joule) : std::nan("");
    case MetricCount:
      break;
  }
  return std::nan("");
}

QVariant SweepTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const analysis::SweepRow& row = m_table.rows[size_t(index.row())];
  const int keys = int(m_table.keys.size());
  const int col = index.column();
  if (role == Qt::ForegroundRole && row.failed) return QBrush(bad_color());
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (col < keys) {
    if (role == Qt::DisplayRole || role == ValueRole) return QString::fromStdString(row.values.at(size_t(col)));
    return {};
  }
  const auto metric = Metric(col - keys);
  if (row.failed && metric != Repeats) {
    if (role == Qt::DisplayRole) return metric == StepMs ? QStringLiteral("failed") : QStringLiteral("–");
    if (role == Qt::ToolTipRole) return QStringLiteral("no measured step (the trial failed, e.g. out of memory)");
    return {};
  }
  double p25 = 0, p75 = 0;
  const double v = metricValue(row, metric, &p25, &p75);
  if (role == ValueRole) return std::isnan(v) ? QVariant() : QVariant(v);
  if (role != Qt::DisplayRole) return {};
  if (std::isnan(v)) return QStringLiteral("–");
  if (metric == Repeats) return QString::number(row.repeats);
  const std::string unit = metric == TokensPerGpu || metric == TokensTotal ? "tokens/s"
                           : metric == Mfu                                ? "%"
                           : metric == TokensPerJoule                     ? "tokens/J"
                                                                          : "ms";
  QString text = format_metric(v, unit);
  if (p75 > p25) text += QStringLiteral("  (IQR %1–%2)").arg(format_metric(p25, unit), format_metric(p75, unit));
  return text;
}

QVariant SweepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const int keys = int(m_table.keys.size());
  if (section < keys) return QString::fromStdString(m_table.keys.at(size_t(section)));
  if (section - keys < MetricCount) return metricName(Metric(section - keys));
  return {};
}

}  // namespace tunebench::ui
