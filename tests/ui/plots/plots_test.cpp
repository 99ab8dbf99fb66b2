// The plots fed with the synthetic 2-rank 7B DDP recording, offscreen.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QTest>
#include <QThread>

#include "ui/plots/effect_chart.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_data.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/replay_source.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
EventBatch recorded() {
  ReplaySource replay;
  EventBatch events;
  QObject::connect(&replay, &ReplaySource::eventsArrived,
                   [&](const EventBatch& b) { events.insert(events.end(), b.begin(), b.end()); });
  EXPECT_TRUE(replay.load(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl")));
  replay.start(0);
  TB_EXPECT_WAIT_FOR(!replay.isActive(), 10000);
  return events;
}

// `n` /proc samples of rank 0 (CPU use and resident memory, no power), 100 ms apart.
EventBatch cpu_samples(int n) {
  EventBatch batch;
  for (int i = 0; i < n; ++i) {
    protocol::GpuSample s;
    s.cpu_pct = 95.0;
    s.rss_bytes = int64_t(1) << 30;
    batch.push_back({{1, "t", 0, 1000000 + i * 100000}, s});
  }
  return batch;
}

size_t intervals_in(const EventBatch& events) {
  size_t n = 0;
  for (const auto& e : events)
    if (e.is<protocol::Step>()) n += e.as<protocol::Step>().intervals.size();
  return n;
}
}  // namespace

TEST(TimelineData, KeepsEveryIntervalSortedPerRow) {
  const EventBatch events = recorded();
  TimelineData data;
  data.add(events);
  EXPECT_EQ(data.ranks(), 2);
  EXPECT_EQ(data.barCount(), intervals_in(events));
  for (int r = 0; r < data.rows().count(); ++r) {
    const auto& row = data.row(r);
    EXPECT_FALSE(row.empty()) << r;
    for (size_t i = 1; i < row.size(); ++i) EXPECT_LE(row[i - 1].start_s, row[i].start_s);
  }
  // The comm lane of rank 1 holds all-reduce buckets with bytes and bandwidth.
  const auto& comm = data.row(TimelineRows::row(1, protocol::Lane::Comm));
  ASSERT_FALSE(comm.empty());
  EXPECT_EQ(comm.front().phase, protocol::Phase::AllReduce);
  EXPECT_GT(comm.front().bytes, 0);
  EXPECT_GT(comm.front().busbw_gbps, 0.0);
  const double mid = (comm[3].start_s + comm[3].end_s) / 2;
  const auto hit = data.hit(TimelineRows::row(1, protocol::Lane::Comm), mid, 0.0);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rank, 1);
  EXPECT_EQ(hit->bar.start_s, comm[3].start_s);
  const QString tip = describe_hit(*hit);
  EXPECT_TRUE(tip.contains("all-reduce")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("GB/s")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("MiB")) << tip.toStdString();
  // visible() narrows to a window but never misses a bar in it.
  const auto [first, last] = data.visible(TimelineRows::row(1, protocol::Lane::Comm), comm[3].start_s, comm[3].end_s);
  EXPECT_LE(first, 3u);
  EXPECT_GT(last, 3u);
  EXPECT_LT(last - first, comm.size());
}

TEST(TimelinePlot, DrawsBarsAndShowsATooltipUnderTheMouse) {
  TimelinePlot plot;
  plot.resize(1000, 400);
  plot.addEvents(recorded());
  plot.setFollowLatest(false);
  plot.replotIfDirty();
  EXPECT_GT(plot.barCount(), 0u);
  // Show the whole run, then find rank 0's forward of step 5 on screen.
  plot.xAxis->setRange(0, plot.data().latest_s());
  plot.replot();
  EXPECT_GT(plot.lastDrawnRects(), 0);
  const auto& compute = plot.data().row(TimelineRows::row(0, protocol::Lane::Compute));
  const TimelineBar* forward = nullptr;
  for (const auto& b : compute)
    if (b.step == 5 && b.phase == protocol::Phase::Forward) forward = &b;
  ASSERT_NE(forward, nullptr);
  const QPointF pos(plot.xAxis->coordToPixel((forward->start_s + forward->end_s) / 2),
                    plot.yAxis->coordToPixel(TimelineRows::row(0, protocol::Lane::Compute)));
  const auto hit = plot.hitAt(pos);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->bar.phase, protocol::Phase::Forward);
  EXPECT_TRUE(plot.tooltipAt(pos).contains("forward"));
}

TEST(TimelinePlot, FollowLatestShowsTheNewestStep) {
  TimelinePlot plot;
  plot.resize(800, 300);
  const EventBatch events = recorded();
  plot.addEvents(events);
  plot.replotIfDirty();
  EXPECT_TRUE(plot.followLatest());
  EXPECT_NEAR(plot.xAxis->range().upper, plot.data().latest_s(), 1e-9);
  EXPECT_LT(plot.xAxis->range().lower, plot.data().latest_s());
  plot.zoomBy(0.5);
  const double span = plot.xAxis->range().size();
  plot.replotIfDirty();
  EXPECT_NEAR(plot.xAxis->range().size(), span, 1e-9);  // following keeps the user's zoom
}

TEST(StepTimePlot, OnePointPerStepAndRankAndThroughputWhenAllRanksReported) {
  StepTimePlot plot;
  plot.resize(600, 400);
  plot.addEvents(recorded());
  plot.replotIfDirty();
  EXPECT_EQ(plot.stepPoints(0), 11);
  EXPECT_EQ(plot.stepPoints(1), 11);
  EXPECT_EQ(plot.throughputPoints(), 11);
  plot.clear();
  EXPECT_EQ(plot.stepPoints(0), 0);
  EXPECT_EQ(plot.throughputPoints(), 0);
}

TEST(TelemetryPlot, GpuSamplesGiveOneSeriesPerGpu) {
  TelemetryPlot plot;
  plot.resize(600, 400);
  plot.addEvents(recorded());
  plot.replotIfDirty();
  EXPECT_FALSE(plot.cpuMode());
  EXPECT_EQ(plot.seriesCount(), 2);
  EXPECT_EQ(plot.samples("GPU 1", 0), 11);
  EXPECT_EQ(plot.samples("GPU 1", 1), 11);
  EXPECT_EQ(plot.samples("GPU 1", 2), 11);
}

TEST(TelemetryDefects, EveryGpuPanelHasItsValueScale) {
  // A stored 7B fp8 trial (power 111-695 W) drew its power panel without a single tick label.
  TelemetryPlot plot;
  plot.resize(450, 290);
  plot.show();
  EventBatch batch;
  for (int i = 0; i < 60; ++i) {
    protocol::GpuSample s;
    s.index = 0;
    s.util_pct = i < 10 ? 0.0 : 98.0;
    s.mem_used_bytes = int64_t(100) << 30;
    s.power_w = 111.25 + (695.139 - 111.25) * i / 59.0;
    batch.push_back({{0, "t", 0, 1000000 + i * 100000}, s});
  }
  plot.addEvents(batch);
  plot.setComplete(true);
  plot.replotIfDirty();
  for (int panel = 0; panel < 3; ++panel) {
    QCPAxis* y = plot.panel(panel)->axis(QCPAxis::atLeft);
    ASSERT_LT(plot.panel(panel)->rect().height(), 68) << "a panel this short asks the ticker for one tick";
    int inside = 0;
    for (double t : y->tickVector()) inside += y->range().contains(t);
    EXPECT_GE(inside, 2) << "panel " << panel << ", range " << y->range().lower << "-" << y->range().upper;
    EXPECT_TRUE(y->tickLabels()) << panel;
  }
}

TEST(TelemetryPlot, CpuSamplesShowCpuUseAndRss) {
  TelemetryPlot plot;
  plot.addEvents(cpu_samples(4));
  EXPECT_TRUE(plot.cpuMode());
  EXPECT_EQ(plot.samples("rank 0", 0), 4);
  EXPECT_EQ(plot.samples("rank 0", 1), 4);
  EXPECT_EQ(plot.samples("rank 0", 2), 0);
  EXPECT_TRUE(plot.panel(0)->axis(QCPAxis::atLeft)->label().contains("CPU"));
}

TEST(LivePlot, ManyBatchesCoalesceIntoFewReplots) {
  // Batches arrive while the event loop runs, as from a live run: one event per batch (the worst
  // case), the loop turning between batches, for several refresh intervals. A plot that replotted
  // per batch, or on a zero-length timer, would replot about once per batch; a coalescing one
  // replots at most once per 1/kRefreshHz s of wall time, whatever the machine's speed, and at
  // least once while the batches still arrive (the view stays live).
  TimelinePlot plot;
  plot.resize(600, 300);
  const EventBatch events = recorded();
  ASSERT_GT(events.size(), 20u);
  const int intervalMs = 1000 / LivePlot::kRefreshHz;
  QElapsedTimer clock;
  clock.start();
  int replotsWhileFeeding = 0;
  for (size_t i = 0; i < events.size() || clock.elapsed() < 6 * intervalMs; ++i) {
    plot.addEvents({events[i % events.size()]});
    QCoreApplication::processEvents();
    if (i % 16 == 0) QThread::usleep(500);
    replotsWhileFeeding = plot.replotCount();
  }
  const qint64 elapsed = clock.elapsed();
  EXPECT_GE(replotsWhileFeeding, 1) << "no replot while batches arrived";
  EXPECT_LE(plot.replotCount(), 1 + elapsed / intervalMs) << plot.replotCount() << " replots in " << elapsed << " ms";
}

namespace {
QLabel* shown_note(const QWidget& plot, const char* name) {
  auto* note = plot.findChild<QLabel*>(QString::fromLatin1(name));
  return note && !note->isHidden() ? note : nullptr;
}
}  // namespace

TEST(TelemetryDefects, ACpuTrialHidesThePowerPanelAndSaysWhy) {
  // An empty "power (W)" panel was drawn for every CPU trial.
  TelemetryPlot plot;
  plot.resize(600, 400);
  plot.addEvents(cpu_samples(4));
  plot.replotIfDirty();
  EXPECT_TRUE(plot.panel(0)->visible());
  EXPECT_TRUE(plot.panel(1)->visible());
  EXPECT_FALSE(plot.panel(2)->visible());
  QLabel* note = shown_note(plot, "telemetryNote");
  ASSERT_NE(note, nullptr);
  EXPECT_TRUE(note->text().contains(QStringLiteral("power"), Qt::CaseInsensitive)) << note->text().toStdString();
}

TEST(TelemetryDefects, TheCpuNoteWrapsInANarrowPanelWithoutBeingCut) {
  // In a dock narrower than the note's line (380 px at 1600 x 1000) the note wrapped to two lines in
  // a row one line high: its second line was cut off at the bottom of the plot.
  TelemetryPlot plot;
  plot.resize(900, 300);
  plot.addEvents(cpu_samples(4));
  plot.replotIfDirty();
  QLabel* note = shown_note(plot, "telemetryNote");
  ASSERT_NE(note, nullptr);
  plot.show();  // a hidden widget's resize reaches the plot's viewport only when shown
  plot.resize(note->fontMetrics().horizontalAdvance(note->text()) * 2 / 3, 300);
  QCoreApplication::processEvents();
  plot.replotIfDirty();
  ASSERT_GT(note->heightForWidth(note->width()), note->fontMetrics().height() * 3 / 2)
      << "the note fits one line: " << note->width() << " of " << plot.width() << " px, text "
      << note->fontMetrics().horizontalAdvance(note->text());
  EXPECT_GE(note->height(), note->heightForWidth(note->width()));
  EXPECT_LE(note->geometry().bottom(), plot.height());
}

TEST(StepTimeDefects, UnknownTokensAreNotPlottedAsZeroThroughput) {
  // An imported trace without its settings: tokens/s was drawn as 0 at every step.
  StepTimePlot plot;
  plot.resize(600, 400);
  EventBatch batch;
  for (int i = 0; i < 4; ++i) {
    protocol::Step s;
    s.step = i;
    s.start_us = i * 100'000;
    s.end_us = s.start_us + 90'000;
    s.step_ms = 90.0;
    s.tokens = 0;  // unknown
    batch.push_back({{1, "t", 0, s.end_us}, s});
  }
  plot.addEvents(batch);
  plot.replotIfDirty();
  EXPECT_EQ(plot.stepPoints(0), 4);
  EXPECT_EQ(plot.throughputPoints(), 0);
  QLabel* note = shown_note(plot, "throughputNote");
  ASSERT_NE(note, nullptr);
  EXPECT_TRUE(note->text().contains(QStringLiteral("unknown"))) << note->text().toStdString();
}

TEST(StepTimeDefects, TheTotalThroughputLineStaysInsideItsPlot) {
  // A fast warm-up step (the machine got busier later) drew the "total" line above its panel: the
  // axis was scaled to the measured steps only.
  StepTimePlot plot;
  plot.resize(600, 400);
  EventBatch batch;
  const double ms[] = {40, 60, 200, 210, 205, 220};  // warm-up steps 0-1 fast, then slow
  for (int i = 0; i < 6; ++i) {
    protocol::Step s;
    s.step = i;
    s.warmup = i < 2;
    s.start_us = i * 1'000'000;
    s.end_us = s.start_us + int64_t(ms[i] * 1000);
    s.step_ms = ms[i];
    s.tokens = 4096;
    batch.push_back({{1, "t", 0, s.end_us}, s});
  }
  plot.addEvents(batch);
  plot.replotIfDirty();
  const double top = plot.throughputRect()->axis(QCPAxis::atLeft)->range().upper;
  EXPECT_GE(top, 4096.0 / 0.040) << "the fastest step's throughput is above the axis";
}

// The effect chart's axis names the unit the baseline counts (analysis::work_rate): samples/s for
// a script counted in samples, whose tokens are unknown; tokens/s otherwise.
TEST(EffectChart, TheAxisNamesTheBaselinesUnit) {
  investigate::Attribution a;
  a.baseline.measured_steps = 10;
  a.baseline.samples_per_step = 16;
  EffectChart samples;
  samples.setAttribution(a);
  EXPECT_TRUE(samples.xAxis->label().startsWith(QStringLiteral("samples/s change"))) << samples.xAxis->label().toStdString();
  a.baseline.tokens_per_step = 4096;
  EffectChart tokens;
  tokens.setAttribution(a);
  EXPECT_TRUE(tokens.xAxis->label().startsWith(QStringLiteral("tokens/s change"))) << tokens.xAxis->label().toStdString();
}
