// Issue 15 item 8, the plots alone: zoom limited to the data, no jump after the last step, the
// broadcast phase in the legend, legends that never cover an axis, tick labels that never collide,
// and a step-time axis scaled to the measured steps rather than the warm-up.
#include <gtest/gtest.h>

#include <QFontMetrics>
#include <QTest>
#include <QWheelEvent>

#include "tests/ui/fake_events.h"
#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
// `n` steps of `step_ms` on `ranks` ranks, steps back to back from t = 1 s; warm-up steps first.
EventBatch run(int ranks, int n, double step_ms, int warmup = 0, double warmup_ms = 0.0) {
  EventBatch batch;
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.world_size = ranks;
  c.warmup = warmup;
  for (int r = 0; r < ranks; ++r) batch.push_back({{1, "t", r, 1000000}, fake::make_hello(c, r, false)});
  int64_t t = 1000000;
  for (int i = 0; i < n; ++i) {
    const double ms = i < warmup ? warmup_ms : step_ms;
    for (int r = 0; r < ranks; ++r) {
      protocol::Step s = fake::make_step(c, r, i, t, int64_t(ms * 1000), false);
      s.warmup = i < warmup;
      batch.push_back({{1, "t", r, s.end_us}, s});
      protocol::GpuSample g;
      g.cpu_pct = 90;
      g.rss_bytes = int64_t(1) << 30;
      batch.push_back({{1, "t", r, s.end_us}, g});
    }
    t += int64_t(ms * 1000);
  }
  return batch;
}

// The first two neighbouring tick labels of `axis` that overlap (drawn with the axis' font), as
// text for the failure message; empty when none do.
std::string labels_collide(QCPAxis* axis) {
  const QFontMetrics fm(axis->tickLabelFont());
  const QVector<double> ticks = axis->tickVector();
  const QVector<QString> labels = axis->tickVectorLabels();
  const bool horizontal = axis->orientation() == Qt::Horizontal;
  std::vector<std::pair<double, QString>> placed;  // label centre in pixels along the axis
  for (int i = 0; i < ticks.size(); ++i)
    if (axis->range().contains(ticks[i]) && !labels.value(i).isEmpty())
      placed.emplace_back(axis->coordToPixel(ticks[i]), labels[i]);
  std::sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto extent = [&](const QString& text) { return horizontal ? fm.horizontalAdvance(text) : fm.height(); };
  for (size_t i = 1; i < placed.size(); ++i) {
    const double gap =
        (placed[i].first - extent(placed[i].second) / 2.0) - (placed[i - 1].first + extent(placed[i - 1].second) / 2.0);
    if (gap < 2)
      return QStringLiteral("'%1' and '%2' (%3 px apart)")
          .arg(placed[i - 1].second, placed[i].second)
          .arg(gap)
          .toStdString();
  }
  return {};
}
}  // namespace

TEST(TimelineDefects, WheelZoomIsLimitedToTheData) {
  TimelinePlot plot;
  plot.resize(800, 400);
  plot.show();
  plot.addEvents(run(2, 20, 400));
  plot.replotIfDirty();
  const double latest = plot.data().latest_s();
  const QPointF centre(plot.axisRect()->center());
  for (int i = 0; i < 40; ++i) {  // far out
    QWheelEvent out(centre, plot.mapToGlobal(centre), {}, QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
    QApplication::sendEvent(&plot, &out);
  }
  plot.replotIfDirty();
  EXPECT_GE(plot.xAxis->range().lower, -0.05 * latest);
  EXPECT_LE(plot.xAxis->range().upper, 1.05 * latest);
}

TEST(TimelineDefects, TheViewStaysOnTheDataAfterAnInterruptedLastStep) {
  TimelinePlot plot;
  plot.resize(800, 400);
  EventBatch b = run(1, 70, 400);  // 28 s of 400 ms steps
  // Stop ends the last step early; the worker reports it with a long step_ms (SIGTERM mid-step).
  protocol::Step last = b[b.size() - 2].as<protocol::Step>();
  last.step = 70;
  last.start_us = last.end_us;
  last.end_us += 200000;  // stopped 200 ms into the step ...
  last.step_ms = 17000;   // ... but the step time counts from where the rank stalled
  b.push_back({{1, "t", 0, last.end_us}, last});
  plot.addEvents(b);
  plot.replotIfDirty();
  const double latest = plot.data().latest_s();
  EXPECT_LE(plot.xAxis->range().upper, latest * 1.05);
  EXPECT_LT(plot.xAxis->range().size(), latest);  // still the latest steps, not 0..70 s
}

TEST(TimelineDefects, TheLegendListsTheBroadcastPhase) {
  // The legend lists the phases drawn (issue 44): a broadcast drawn is a broadcast listed.
  TimelinePlot plot;
  protocol::Step s;
  s.step = 0;
  s.start_us = 1'000'000;
  s.end_us = 1'400'000;
  s.step_ms = 400;
  s.intervals.push_back({protocol::Lane::Comm, protocol::Phase::Broadcast, 1'000'000, 1'100'000, "params", 1 << 20, 0.0});
  plot.addEvents({{{1, "t", 0, s.end_us}, s}});
  plot.replotIfDirty();
  bool broadcast = false;
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = dynamic_cast<PhaseLegendItem*>(plot.legend->item(i)))
      broadcast = broadcast || item->phase() == protocol::Phase::Broadcast;
  EXPECT_TRUE(broadcast);
}

TEST(TimelineDefects, TheLegendsNamesAreDrawnWhole) {
  // The names' descenders were cut ("all-qather", "launch qap"): an item was exactly the font's
  // height, and QCustomPlot clips each item to its outer rectangle moved up one pixel.
  TimelinePlot plot;
  plot.resize(1200, 230);
  plot.show();
  plot.addEvents(run(2, 20, 400));
  plot.replotIfDirty();
  int names = 0;
  bool descender = false;
  for (int i = 0; i < plot.legend->itemCount(); ++i) {
    auto* item = dynamic_cast<PhaseLegendItem*>(plot.legend->item(i));
    if (!item) continue;  // an empty cell of the last row
    const QRect drawn = QFontMetrics(item->font())
                            .boundingRect(item->textRect().toAlignedRect(), Qt::AlignLeft | Qt::AlignVCenter,
                                          item->text());
    const QRect clip = item->outerRect().translated(0, -1);
    EXPECT_GE(drawn.top(), clip.top()) << phase_name(item->phase()).toStdString();
    EXPECT_LE(drawn.bottom(), clip.bottom())
        << phase_name(item->phase()).toStdString() << ": text to " << drawn.bottom() << ", clip to " << clip.bottom();
    ++names;
    descender = descender || item->phase() == protocol::Phase::Optimizer;
  }
  // The phases a DDP step draws (the legend lists those), "optimizer" with its descender among them.
  EXPECT_GE(names, 5);
  EXPECT_TRUE(descender);
}

TEST(StepTimeDefects, TheThroughputLegendCoversNoAxis) {
  StepTimePlot plot;
  plot.resize(800, 500);
  plot.addEvents(run(2, 30, 400));
  plot.replotIfDirty();
  plot.replot();
  for (QCPLegend* legend : plot.findChildren<QCPLegend*>()) {
    if (!legend->visible()) continue;
    const QRect r = legend->outerRect();
    for (QCPAxisRect* rect : plot.axisRects()) {
      // The plotting area and its axes' bands (ticks and labels) stay uncovered.
      const QRect bottomBand(rect->left(), rect->bottom(), rect->width(), 30);
      EXPECT_FALSE(r.intersects(bottomBand)) << "a legend covers the x axis";
      EXPECT_FALSE(r.intersects(rect->rect())) << "a legend covers data";
    }
  }
}

TEST(StepTimeDefects, TheStepAxisIsScaledToTheMeasuredStepsNotTheWarmUp) {
  StepTimePlot plot;
  plot.resize(800, 500);
  plot.addEvents(run(2, 30, 400, 2, 3500));
  plot.replotIfDirty();
  const QCPRange y = plot.stepRect()->axis(QCPAxis::atLeft)->range();
  EXPECT_LT(y.upper, 1000.0) << "3.5 s warm-up steps flatten the measured 400 ms steps";
  EXPECT_GT(y.upper, 400.0);
}

TEST(StepTimeDefects, TheWarmUpLabelCoversNoMeasuredStep) {
  // Issue 44: at 1280 x 760 "warm-up ↑ 2152 ms" sat over the first measured steps' markers.
  StepTimePlot plot;
  plot.resize(540, 170);
  plot.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&plot));
  plot.addEvents(run(2, 11, 1100, 1, 2150));
  for (int i = 0; i < 3; ++i) {
    plot.markDirty();
    plot.replotIfDirty();
    plot.replot();
  }
  QCPItemText* label = nullptr;
  for (int i = 0; i < plot.itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot.item(i)); text && text->text().startsWith("warm-up"))
      label = text;
  ASSERT_NE(label, nullptr);
  ASSERT_TRUE(label->visible()) << "the warm-up step is clipped: the label says how high it went";
  const QRectF box(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
  int measured = 0;
  for (int g = 0; g < plot.graphCount(); ++g) {
    QCPGraph* graph = plot.graph(g);
    if (graph->valueAxis() != plot.stepRect()->axis(QCPAxis::atLeft) || !graph->visible()) continue;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
      if (it->key < 1) continue;  // the warm-up step itself is what the label is about
      const QPointF at(graph->keyAxis()->coordToPixel(it->key), graph->valueAxis()->coordToPixel(it->value));
      // A marker is 6 px across.
      EXPECT_FALSE(box.adjusted(-3, -3, 3, 3).contains(at))
          << "step " << it->key << " under the label (" << at.y() << " px; the label ends at " << box.bottom() << ")";
      ++measured;
    }
  }
  EXPECT_GT(measured, 10);
}

TEST(PlotDefects, TickLabelsDoNotCollideAt800x500) {
  // In an 800x500 window (it opens 1059 px wide: the docks' minimum) each plot gets about this
  // much room (measured on a screenshot of the window).
  TimelinePlot timeline;
  StepTimePlot steps;
  TelemetryPlot telemetry;
  const EventBatch b = run(2, 300, 400);
  timeline.resize(700, 130);
  steps.resize(350, 160);
  telemetry.resize(350, 160);
  timeline.addEvents(b);
  steps.addEvents(b);
  telemetry.addEvents(b);
  timeline.setFollowLatest(false);
  for (LivePlot* p :
       {static_cast<LivePlot*>(&timeline), static_cast<LivePlot*>(&steps), static_cast<LivePlot*>(&telemetry)}) {
    p->show();  // a hidden widget gets no resize event: its viewport would keep the default size
    ASSERT_TRUE(QTest::qWaitForWindowExposed(p));
    p->markDirty();
    p->replotIfDirty();
    p->replot();
    p->replot();  // tick labels settle after the margins did
    for (QCPAxisRect* rect : p->axisRects())
      for (QCPAxis* axis : rect->axes()) {
        if (!axis->visible()) continue;
        if (axis->tickLabels())
          EXPECT_EQ(labels_collide(axis), "")
              << p->objectName().toStdString() << " axis " << axis->label().toStdString();
        // A vertical axis title longer than its panel runs into the next panel's.
        if (axis->orientation() == Qt::Vertical && !axis->label().isEmpty())
          EXPECT_LE(QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label()), rect->height() + 8)
              << p->objectName().toStdString() << ": '" << axis->label().toStdString() << "' in " << rect->height()
              << " px";
      }
  }
}
