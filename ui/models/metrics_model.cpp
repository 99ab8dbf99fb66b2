#include "ui/models/metrics_model.h"

#include "ui/models/status_colors.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace tunebench::ui {

QString format_metric(double value, const std::string& unit) {
  // The decimals every view shows the metric with (analysis::metric_decimals).
  return QLocale(QLocale::English).toString(value, 'f', analysis::metric_decimals(value, unit));
}

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}


void MetricsModel::setComparison(const analysis::Comparison& comparison, const QStringList& trialNames) {
  beginResetModel();
  m_rows = comparison.metrics;
  m_names = trialNames;
  m_baseline = comparison.baseline;
  m_others.clear();
  for (int i = 0; i < trialNames.size(); ++i)
    if (size_t(i) != m_baseline) m_others.push_back(i);
  const size_t n = comparison.trials.size();
  auto empty_row = [n](const char* key, const char* label, const char* unit) {
    analysis::MetricRow row;
    row.key = key;
    row.label = label;
    row.unit = unit;
    row.better = analysis::Better::Higher;
    row.values.resize(n);
    row.delta.resize(n);
    row.ratio.resize(n);
    row.ratio_low.resize(n);
    row.ratio_high.resize(n);
    row.beyond_noise.resize(n);
    return row;
  };
  // GPU utilisation is asked for in every comparison; compare() leaves the row out when no trial
  // has samples, and a missing row would read as "not looked at" rather than "not measured".
  // (Trials on the CPU have no GPU to ask about.)
  const bool anyGpu = std::any_of(comparison.trials.begin(), comparison.trials.end(),
                                  [](const analysis::TrialMetrics& t) { return analysis::on_gpu(t); });
  if (anyGpu && rowOf(QStringLiteral("gpu_util_pct")) < 0)
    m_rows.push_back(empty_row("gpu_util_pct", "GPU utilisation", "%"));
  // Scaling efficiency is not a per-step sample; it joins the table as one more row so it sits
  // beside the throughput it is computed from.
  if (comparison.single_reference && std::any_of(comparison.scaling_efficiency.begin(),
                                                 comparison.scaling_efficiency.end(),
                                                 [](const std::optional<double>& e) { return e.has_value(); })) {
    // "vs 1 GPU", or "vs 1 CPU rank": a CPU trial is never called a GPU one.
    const std::string one = "Scaling efficiency vs 1 " + analysis::device_noun(comparison.trials[*comparison.single_reference]);
    analysis::MetricRow row = empty_row("scaling_efficiency_pct", one.c_str(), "%");
    for (size_t i = 0; i < n && i < comparison.scaling_efficiency.size(); ++i)
      if (comparison.scaling_efficiency[i])
        row.values[i] = analysis::spread_of_value(*comparison.scaling_efficiency[i] * 100.0);
    m_rows.push_back(row);
  }
  endResetModel();
}

int MetricsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int MetricsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + int(m_names.size()) + 2 * int(m_others.size());
}

int MetricsModel::deltaColumn(int trial) const {
  for (size_t k = 0; k < m_others.size(); ++k)
    if (m_others[k] == trial) return 1 + int(m_names.size()) + 2 * int(k);
  return -1;
}

int MetricsModel::ratioColumn(int trial) const {
  const int d = deltaColumn(trial);
  return d < 0 ? -1 : d + 1;
}

int MetricsModel::rowOf(const QString& key) const {
  for (size_t r = 0; r < m_rows.size(); ++r)
    if (QString::fromStdString(m_rows[r].key) == key) return int(r);
  return -1;
}

QString MetricsModel::cellText(const analysis::MetricRow& row, int column) const {
  const int n = int(m_names.size());
  if (column == 0)
    return QString::fromStdString(row.label) +
           (row.unit.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(row.unit)));
  if (column <= n) {
    const auto& v = row.values[size_t(column - 1)];
    if (!v) return QStringLiteral("–");
    QString text = format_metric(v->median, row.unit);
    if (v->n > 1 && v->iqr() > 0)
      text +=
          QStringLiteral("\nIQR %1–%2")
              .arg(format_metric(v->p25, row.unit), format_metric(v->p75, row.unit));  // second line: narrow columns
    return text;
  }
  const int k = (column - 1 - n) / 2;
  const size_t trial = size_t(m_others[size_t(k)]);
  const bool isRatio = (column - 1 - n) % 2 == 1;
  if (isRatio) {
    const auto& r = row.ratio[trial];
    return r ? QStringLiteral("%1x").arg(*r, 0, 'f', 2) : QStringLiteral("–");
  }
  const auto& d = row.delta[trial];
  return d ? (*d >= 0 ? QStringLiteral("+") : QString()) + format_metric(*d, row.unit) : QStringLiteral("–");
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const analysis::MetricRow& row = m_rows[size_t(index.row())];
  const int n = int(m_names.size());
  const int col = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return cellText(row, col);
    case Qt::TextAlignmentRole:
      return int((col == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
    case KeyRole:
      return QString::fromStdString(row.key);
    case MedianRole:
      if (col >= 1 && col <= n && row.values[size_t(col - 1)]) return row.values[size_t(col - 1)]->median;
      return {};
    case RatioRole:
      if (col > n && (col - 1 - n) % 2 == 1) {
        const auto& r = row.ratio[size_t(m_others[size_t((col - 1 - n) / 2)])];
        if (r) return *r;
      }
      return {};
    case Qt::ToolTipRole:
      if (col >= 1 && col <= n && row.values[size_t(col - 1)]) {
        const analysis::Spread& s = *row.values[size_t(col - 1)];
        return QStringLiteral(
                   "n = %1 measured steps (repeats pooled)\nmedian %2, p25 %3, p75 %4\nmean %5, min %6, max %7")
            .arg(s.n)
            .arg(format_metric(s.median, row.unit), format_metric(s.p25, row.unit), format_metric(s.p75, row.unit),
                 format_metric(s.mean, row.unit), format_metric(s.min, row.unit), format_metric(s.max, row.unit));
      }
      if (col > n && (col - 1 - n) % 2 == 1) {
        const size_t t = size_t(m_others[size_t((col - 1 - n) / 2)]);
        const QString noise = row.ratio[t] && row.better != analysis::Better::Neither &&
                                      analysis::standing(row, t) == analysis::Standing::Neither
                                  ? QStringLiteral("\nwithin the noise: not coloured as better or worse")
                                  : QString();
        if (row.ratio_low[t] && row.ratio_high[t])
          return QStringLiteral("ratio range from the quartiles: %1x – %2x%3")
              .arg(*row.ratio_low[t], 0, 'f', 2)
              .arg(*row.ratio_high[t], 0, 'f', 2)
              .arg(noise);
      }
      if (col >= 1 && col <= n && row.key == "gpu_util_pct")
        return QStringLiteral("not measured: no GPU samples during the measured steps");
      return {};
    case Qt::ForegroundRole:
      if (col > n && (col - 1 - n) % 2 == 1 && row.better != analysis::Better::Neither) {
        const size_t t = size_t(m_others[size_t((col - 1 - n) / 2)]);
        // Within the noise (analysis::beyond_noise): neither better nor worse.
        const analysis::Standing st = analysis::standing(row, t);
        if (st == analysis::Standing::Neither) return {};
        return QBrush(st == analysis::Standing::Better ? good_color() : bad_color());
      }
      return {};
    default:
      return {};
  }
}

QString wrap_header(const QString& name, int width) {
  QStringList lines;
  QString line;
  for (const QString& word : name.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
      lines << line;
      line.clear();
    }
    line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
  }
  if (!line.isEmpty()) lines << line;
  return lines.join(QLatin1Char('\n'));
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const int n = int(m_names.size());
  if (section == 0) return QStringLiteral("metric\n(median over measured steps)");
  // Wrapped headers keep the columns as narrow as their numbers: three trials fit the window.
  // Deltas and ratios name their trial by its number; the value columns carry the names.
  if (section <= n)
    return QStringLiteral("#%1 ").arg(section) + wrap_header(m_names.value(section - 1)) +
           (size_t(section - 1) == m_baseline ? QStringLiteral("\n(baseline)") : QString());
  const int k = (section - 1 - n) / 2;
  if (k >= int(m_others.size())) return {};
  const int trial = m_others[size_t(k)] + 1;
  return (section - 1 - n) % 2 == 0 ? QStringLiteral("Δ #%1\nvs baseline").arg(trial)
                                    : QStringLiteral("ratio #%1\nvs baseline").arg(trial);
}

}  // namespace tunebench::ui
