#include "ui/plots/step_compare_plot.h"

#include <algorithm>
#include <climits>
#include <set>

#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"

namespace tunebench::ui {

namespace {
constexpr double kBarHeight = 0.7;
}  // namespace

StepComparePlot::StepComparePlot(QWidget* parent) : LivePlot(parent) {
  setObjectName(QStringLiteral("stepComparePlot"));
  xAxis->setLabel(QStringLiteral("time since the step started (ms)"));
  yAxis->setRangeReversed(true);  // first trial on top
  yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  yAxis->grid()->setVisible(false);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  legend->setVisible(true);
  axisRect()->insetLayout()->take(legend);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(1, 0, legendRow);
  legendRow->setMargins(QMargins(6, 0, 6, 4));
  legendRow->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setIconSize(12, 10);
  applyPalette();
}

void StepComparePlot::setSteps(const QStringList& names, const std::vector<const protocol::TrialLog*>& logs,
                               const std::vector<int64_t>& steps) {
  clearItems();
  m_endLabels.clear();
  legend->clearItems();
  m_barCount = 0;
  m_steps_ms.assign(logs.size(), 0.0);
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(yAxis->ticker());
  ticker->clear();
  std::set<protocol::Phase> seen;
  int row = 0;
  double longest = 0;
  const QColor text = palette().color(QPalette::WindowText);
  for (size_t t = 0; t < logs.size(); ++t) {
    if (t > 0) {  // a thin separator between trials
      auto* line = new QCPItemStraightLine(this);
      line->point1->setCoords(0, row - 0.5);
      line->point2->setCoords(1, row - 0.5);
      QColor c = text;
      c.setAlpha(90);
      line->setPen(QPen(c, 1, Qt::DashLine));
    }
    const protocol::TrialLog* log = logs[t];
    if (!log || steps[t] < 0) {
      ticker->addTick(row++, names.value(int(t)) + QStringLiteral(": no measured step"));
      continue;
    }
    // The step's ranks, each on the common host clock (clock offsets from hello).
    std::vector<std::pair<int, const protocol::Step*>> ranks;
    int64_t origin = LLONG_MAX, end = LLONG_MIN;
    for (const auto& [rank, rl] : log->ranks) {
      if (int(ranks.size()) >= kMaxRanks) break;
      const int64_t offset = rl.hello ? rl.hello->clock_offset_us : 0;
      for (const protocol::Step& s : rl.steps)
        if (s.step == steps[t]) {
          ranks.emplace_back(rank, &s);
          origin = std::min(origin, s.start_us + offset);
          end = std::max(end, s.end_us + offset);
          break;
        }
    }
    if (ranks.empty()) {
      ticker->addTick(row++, names.value(int(t)) + QStringLiteral(": no measured step"));
      continue;
    }
    const int firstRow = row;
    m_steps_ms[t] = double(end - origin) / 1e3;
    longest = std::max(longest, m_steps_ms[t]);
    for (const auto& [rank, step] : ranks) {
      const auto& rl = log->ranks.at(rank);
      const int64_t offset = (rl.hello ? rl.hello->clock_offset_us : 0) - origin;
      for (protocol::Lane lane : protocol::kLanes) {
        bool any = false;
        for (const protocol::Interval& in : step->intervals) {
          if (in.lane != lane) continue;
          any = true;
          auto* rect = new QCPItemRect(this);
          rect->topLeft->setCoords(double(in.start_us + offset) / 1e3, row - kBarHeight / 2);
          rect->bottomRight->setCoords(double(in.end_us + offset) / 1e3, row + kBarHeight / 2);
          rect->setPen(Qt::NoPen);
          rect->setBrush(phase_color(in.phase));
          rect->setSelectable(false);
          seen.insert(in.phase);
          ++m_barCount;
        }
        // Lanes with nothing (a single GPU's comm lane) are left out rather than drawn empty.
        if (!any) continue;
        // "#2 r1 comm": the trial's number as in the breakdown and the tables; its name is on the
        // first row only (long names would leave no room for the bars).
        const bool first = row == firstRow;
        const QString name = names.value(int(t));
        const QString shortName = name.size() > 24 ? name.left(23) + QStringLiteral("…") : name;
        ticker->addTick(row, (first ? shortName + QStringLiteral("  ") : QString()) +
                                 QStringLiteral("#%1 r%2 %3").arg(t + 1).arg(rank).arg(lane_name(lane)));
        ++row;
      }
    }
    // The step's end, with its duration, so the two steps' lengths compare directly.
    auto* mark = new QCPItemLine(this);
    mark->start->setCoords(m_steps_ms[t], firstRow - 0.5);
    mark->end->setCoords(m_steps_ms[t], row - 0.5);
    mark->setPen(QPen(text, 1.5));
    auto* label = new QCPItemText(this);
    label->position->setCoords(m_steps_ms[t], firstRow - 0.5);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setPadding(QMargins(4, 2, 0, 0));
    label->setColor(text);
    label->setText(
        QStringLiteral("step %1: %2 ms").arg(steps[t]).arg(m_steps_ms[t], 0, 'f', m_steps_ms[t] < 100 ? 1 : 0));
    QColor back = palette().color(QPalette::Base);
    back.setAlpha(200);  // readable over the bars it may cover
    label->setBrush(back);
    label->setClipToAxisRect(true);
    m_endLabels.push_back(label);
  }
  m_rowCount = row;
  for (protocol::Phase phase : legend_phases())
    if (seen.count(phase)) legend->addItem(new PhaseLegendItem(legend, phase));  // columns: fitLegendColumns
  yAxis->setRange(-0.5, std::max(1, row) - 0.5);
  xAxis->setRange(0, longest > 0 ? longest * 1.25 : 1.0);  // room for the end label
  markDirty();
}

void StepComparePlot::beforeReplot() {
  const QRect rect = axisRect()->rect();
  for (QCPItemText* label : m_endLabels) {
    const double x = label->position->coords().x();
    const double px = xAxis->coordToPixel(x);
    const double width = QFontMetrics(label->font()).horizontalAdvance(label->text()) + 10;
    const bool fitsLeft = px - width >= rect.left();
    label->setPositionAlignment((fitsLeft ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    label->setPadding(fitsLeft ? QMargins(2, 2, 4, 0) : QMargins(4, 2, 2, 0));
    // A label right of its mark must not run past the plot: widen the axis for it.
    if (!fitsLeft && px + width > rect.right()) xAxis->setRangeUpper(xAxis->pixelToCoord(px + width + 4));
  }
}

}  // namespace tunebench::ui
