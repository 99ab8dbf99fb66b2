#include "ui/plots/timeline_search.h"

#include <algorithm>

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

namespace {
// Lower case without separators, so spellings of one name meet.
QString folded(QString text) {
  text = text.toLower();
  text.remove(QLatin1Char('-'));
  text.remove(QLatin1Char('_'));
  text.remove(QLatin1Char(' '));
  text.replace(QStringLiteral("→"), QStringLiteral("to"));
  return text;
}
}  // namespace

bool bar_matches(const TimelineBar& bar, const QString& query) {
  QString q = folded(query);
  if (q.isEmpty()) return false;
  if (q == QLatin1String("h2d")) q = QStringLiteral("hosttodevice");
  return folded(phase_name(bar.phase)).contains(q) || folded(QString::fromStdString(bar.label)).contains(q);
}

std::vector<BarRef> find_bars(const TimelineData& data, const QString& query, const std::vector<int>& rows) {
  std::vector<BarRef> out;
  if (folded(query).isEmpty()) return out;
  for (int row : rows) {
    const auto& bars = data.row(row);
    for (size_t i = 0; i < bars.size(); ++i)
      if (bar_matches(bars[i], query)) out.push_back({row, i});
  }
  std::sort(out.begin(), out.end(), [&](const BarRef& a, const BarRef& b) {
    const double ta = data.row(a.row)[a.index].start_s, tb = data.row(b.row)[b.index].start_s;
    return ta != tb ? ta < tb : a.row < b.row;
  });
  return out;
}

}  // namespace tunebench::ui
