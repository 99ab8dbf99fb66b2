// The timeline features users of Nsight Systems expect (issue 15), offscreen: the view clamped to
// the data and fit to it, step markers and numbers on the axis, box zoom, a selected span's
// per-phase summary, search for a phase or collective, ranks hidden and lanes folded, and the
// overview strip. The value types (geometry, layout, search, summary) are tested without a window.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include "tests/ui/fake_events.h"
#include "ui/plots/range_summary_model.h"
#include "ui/plots/timeline_layout.h"
#include "ui/plots/timeline_overview.h"
#include "ui/plots/timeline_plot.h"
#include "ui/plots/timeline_range_summary.h"
#include "ui/plots/timeline_search.h"

using namespace tunebench;
using namespace tunebench::ui;
using protocol::Lane;
using protocol::Phase;

namespace {
EventBatch ddp_run(int ranks, int steps, double step_ms = 400) {
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.world_size = ranks;
  c.warmup = 1;
  EventBatch batch;
  for (int r = 0; r < ranks; ++r) batch.push_back({{1, "t", r, 1000000}, fake::make_hello(c, r, false)});
  int64_t t = 1000000;
  for (int i = 0; i < steps; ++i) {
    for (int r = 0; r < ranks; ++r) {
      protocol::Step s = fake::make_step(c, r, i, t, int64_t(step_ms * 1000), false);
      batch.push_back({{1, "t", r, s.end_us}, s});
    }
    t += int64_t(step_ms * 1000);
  }
  return batch;
}

// One rank, one row: bars by hand, in seconds from the origin (t = 0 at 1 s on the host clock).
TimelineData hand_made() {
  protocol::Step s;
  s.step = 0;
  s.start_us = 1000000;
  s.end_us = 2000000;
  s.intervals = {{Lane::Compute, Phase::Forward, 1000000, 1300000, "", 0, 0.0},
                 {Lane::Compute, Phase::Backward, 1300000, 1800000, "", 0, 0.0},
                 {Lane::Comm, Phase::AllReduce, 1500000, 1600000, "bucket 0", 1 << 20, 10.0},
                 {Lane::Comm, Phase::AllReduce, 1700000, 1900000, "bucket 1", 1 << 20, 10.0},
                 {Lane::Host, Phase::HostToDevice, 1000000, 1050000, "", 0, 0.0}};
  TimelineData d;
  d.add({{{1, "t", 0, 1000000}, protocol::Hello{}}, {{1, "t", 0, 2000000}, s}});
  return d;
}
}  // namespace

TEST(TimelineGeometryLimits, ClampAndFitKeepTheViewOnTheData) {
  const TimelineGeometry wide{-130.0, 150.0, 0.0, 800.0};
  const TimelineGeometry c = wide.clamped(0.0, 20.0);
  EXPECT_NEAR(c.t0_s, -0.4, 1e-9);
  EXPECT_NEAR(c.t1_s, 20.4, 1e-9);
  const TimelineGeometry beside{30.0, 32.0, 0.0, 800.0};
  const TimelineGeometry moved = beside.clamped(0.0, 20.0);
  EXPECT_NEAR(moved.t1_s, 20.4, 1e-9);
  EXPECT_NEAR(moved.span_s(), 2.0, 1e-9);
  const TimelineGeometry inside{5.0, 6.0, 0.0, 800.0};
  EXPECT_EQ(inside.clamped(0.0, 20.0).t0_s, 5.0);
  EXPECT_NEAR(inside.fitted(2.0, 12.0).t0_s, 1.8, 1e-9);
  EXPECT_NEAR(inside.fitted(2.0, 12.0).t1_s, 12.2, 1e-9);
}

TEST(TimelineLayoutRows, HiddenRanksAndFoldedLanes) {
  const TimelineLayout all(3, {}, {});
  EXPECT_EQ(all.count(), 9);
  EXPECT_EQ(all.slotOf(2, Lane::Comm), 8);
  const TimelineLayout some(3, {1}, {2});
  ASSERT_EQ(some.count(), 4);  // rank 0's three lanes, rank 2 folded into one row
  EXPECT_EQ(some.slot(3).rank, 2);
  EXPECT_FALSE(some.slot(3).lane.has_value());
  EXPECT_EQ(some.slotOf(1, Lane::Compute), -1);
  EXPECT_EQ(some.slotOf(2, Lane::Comm), 3);
  // In a folded row, host is the top third, comm the bottom third.
  const auto [lo, hi] = some.band(3, Lane::Comm);
  EXPECT_GT(lo, 3.0);
  EXPECT_LE(hi, 3.0 + TimelineRows::kBarHalfHeight + 1e-9);
  EXPECT_EQ(some.laneAt(3, (lo + hi) / 2), Lane::Comm);
  EXPECT_EQ(some.laneAt(3, some.band(3, Lane::Host).first + 0.01), Lane::Host);
  EXPECT_EQ(some.slotAt(3.1), 3);
  EXPECT_FALSE(some.slotAt(3.5).has_value());
}

TEST(TimelineLayoutRows, RankListsParse) {
  EXPECT_EQ(parse_rank_list("0-3, 7", 8), (std::set<int>{0, 1, 2, 3, 7}));
  EXPECT_EQ(parse_rank_list("", 3), (std::set<int>{0, 1, 2}));
  EXPECT_EQ(parse_rank_list("5", 4), std::set<int>{});  // beyond the ranks: shows none of them
  EXPECT_FALSE(parse_rank_list("1-", 8).has_value());
  EXPECT_FALSE(parse_rank_list("a", 8).has_value());
  EXPECT_FALSE(parse_rank_list("3-1", 8).has_value());
}

TEST(TimelineSearch, FindsPhasesAndLabelsWhateverTheSpelling) {
  const TimelineData d = hand_made();
  std::vector<int> rows;
  for (Lane lane : {Lane::Host, Lane::Compute, Lane::Comm}) rows.push_back(TimelineRows::row(0, lane));
  EXPECT_EQ(find_bars(d, QStringLiteral("all-reduce"), rows).size(), 2u);
  EXPECT_EQ(find_bars(d, QStringLiteral("AllReduce"), rows).size(), 2u);
  EXPECT_EQ(find_bars(d, QStringLiteral("all reduce"), rows).size(), 2u);
  const auto bucket = find_bars(d, QStringLiteral("bucket 1"), rows);
  ASSERT_EQ(bucket.size(), 1u);
  EXPECT_NEAR(d.row(bucket[0].row)[bucket[0].index].start_s, 0.7, 1e-9);
  EXPECT_EQ(find_bars(d, QStringLiteral("h2d"), rows).size(), 1u);
  EXPECT_TRUE(find_bars(d, QStringLiteral("  "), rows).empty());
  // In time order across rows.
  const auto any = find_bars(d, QStringLiteral("a"), rows);  // backward, all-reduce x2, ...
  for (size_t i = 1; i < any.size(); ++i)
    EXPECT_LE(d.row(any[i - 1].row)[any[i - 1].index].start_s, d.row(any[i].row)[any[i].index].start_s);
}

TEST(TimelineRangeSummary, TotalsMeansAndCountsClippedToTheSpan) {
  const TimelineData d = hand_made();
  std::vector<int> rows;
  for (Lane lane : {Lane::Host, Lane::Compute, Lane::Comm}) rows.push_back(TimelineRows::row(0, lane));
  // 0.55 s .. 0.75 s: backward inside throughout (0.2 s); bucket 0 from 0.55 to 0.6 (0.05 s);
  // bucket 1 from 0.7 to 0.75 (0.05 s).
  const RangeSummary s = summarize_range(d, 0.75, 0.55, rows);  // either order
  EXPECT_NEAR(s.t0_s, 0.55, 1e-12);
  EXPECT_EQ(s.ranks, 1);
  std::map<Phase, PhaseSummary> by;
  for (const auto& p : s.phases) by[p.phase] = p;
  ASSERT_EQ(by.count(Phase::Forward), 0u);
  EXPECT_EQ(by[Phase::Backward].count, 1);
  EXPECT_NEAR(by[Phase::Backward].total_s, 0.2, 1e-9);
  EXPECT_EQ(by[Phase::AllReduce].count, 2);
  EXPECT_NEAR(by[Phase::AllReduce].total_s, 0.1, 1e-9);
  EXPECT_NEAR(by[Phase::AllReduce].mean_s, 0.05, 1e-9);
  EXPECT_NEAR(by[Phase::Backward].share, 1.0, 1e-9);
  EXPECT_EQ(s.phases.front().phase, Phase::Backward);  // largest first

  RangeSummaryModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setSummary(s);
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0, RangeSummaryModel::Phase).data().toString(), QStringLiteral("backward"));
  EXPECT_EQ(model.index(1, RangeSummaryModel::Count).data().toString(), QStringLiteral("2"));
  EXPECT_EQ(model.index(1, RangeSummaryModel::MeanMs).data().toString(), QStringLiteral("50.000"));
}

TEST(TimelineFeatures, StepNumbersMarkTheStepStartsOnTheTopAxis) {
  TimelinePlot plot;
  plot.resize(900, 300);
  plot.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&plot));
  plot.addEvents(ddp_run(2, 12, 400));
  plot.fitToData();
  plot.replotIfDirty();
  QTest::qWait(100);
  plot.replotIfDirty();
  plot.replot();
  const QVector<double> ticks = plot.stepAxis()->tickVector();
  const QVector<QString> labels = plot.stepAxis()->tickVectorLabels();
  ASSERT_FALSE(ticks.isEmpty());
  const auto& marks = plot.data().stepMarks();
  ASSERT_EQ(marks.size(), 12u);
  for (int i = 0; i < ticks.size(); ++i) {
    const int step = labels[i].toInt();
    EXPECT_NEAR(ticks[i], marks[size_t(step)].t_s, 1e-9) << "label " << labels[i].toStdString();
  }
  // Zoomed out over thousands of steps the numbers thin out instead of overlapping.
  TimelinePlot many;
  many.resize(600, 300);
  many.show();  // a hidden plot gets no resize event: its axis rect would keep a default width
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&many));
  many.addEvents(ddp_run(1, 600, 50));
  many.fitToData();
  many.replotIfDirty();
  QTest::qWait(100);  // the replot after the first layout, fitted to the real width
  many.replotIfDirty();
  many.replot();
  const QVector<double> t = many.stepAxis()->tickVector();
  ASSERT_GE(t.size(), 2);
  EXPECT_LT(t.size(), 20);
  for (int i = 1; i < t.size(); ++i)
    EXPECT_GT(many.xAxis->coordToPixel(t[i]) - many.xAxis->coordToPixel(t[i - 1]), 20.0);
}

TEST(TimelineFeatures, CtrlDragZoomsToTheSpanAndShiftDragSelectsIt) {
  TimelinePlot plot;
  plot.resize(1000, 300);
  plot.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&plot));
  plot.addEvents(ddp_run(2, 20, 400));
  plot.fitToData();
  plot.replotIfDirty();
  plot.replot();
  const int y = plot.axisRect()->center().y();
  const int x0 = plot.axisRect()->left() + 100, x1 = plot.axisRect()->left() + 300;
  const double t0 = plot.xAxis->pixelToCoord(x0), t1 = plot.xAxis->pixelToCoord(x1);
  QSignalSpy selected(&plot, &TimelinePlot::rangeSelected);
  QTest::mousePress(&plot, Qt::LeftButton, Qt::ShiftModifier, QPoint(x0, y));
  QTest::mouseMove(&plot, QPoint(x1, y));
  QTest::mouseRelease(&plot, Qt::LeftButton, Qt::ShiftModifier, QPoint(x1, y));
  ASSERT_EQ(selected.size(), 1);
  ASSERT_TRUE(plot.selectedRange().has_value());
  EXPECT_NEAR(plot.selectedRange()->first, t0, 1e-6);
  EXPECT_NEAR(plot.selectedRange()->second, t1, 1e-6);
  QTest::mousePress(&plot, Qt::LeftButton, Qt::ControlModifier, QPoint(x0, y));
  QTest::mouseMove(&plot, QPoint(x1, y));
  QTest::mouseRelease(&plot, Qt::LeftButton, Qt::ControlModifier, QPoint(x1, y));
  EXPECT_NEAR(plot.xAxis->range().lower, t0, 1e-6);
  EXPECT_NEAR(plot.xAxis->range().upper, t1, 1e-6);
  EXPECT_FALSE(plot.followLatest());
  plot.fitToData();
  EXPECT_NEAR(plot.xAxis->range().lower,
              plot.data().earliest_s() - 0.02 * (plot.data().latest_s() - plot.data().earliest_s()), 1e-6);
}

TEST(TimelineFeatures, SearchCountsAndStepsThroughMatches) {
  TimelinePlot plot;
  plot.resize(1000, 300);
  plot.addEvents(ddp_run(2, 10, 400));
  QSignalSpy changed(&plot, &TimelinePlot::searchChanged);
  plot.setSearch(QStringLiteral("allreduce"));
  EXPECT_EQ(plot.matchCount(), 2 * 10 * 6);  // 6 buckets per step and rank
  ASSERT_TRUE(plot.stepMatch(+1));
  EXPECT_EQ(plot.currentMatch(), 0);
  const BarRef first = plot.matches().front();
  const TimelineBar& bar = plot.data().row(first.row)[first.index];
  EXPECT_LE(plot.xAxis->range().lower, bar.start_s);
  EXPECT_GE(plot.xAxis->range().upper, bar.end_s);
  ASSERT_TRUE(plot.stepMatch(-1));
  EXPECT_EQ(plot.currentMatch(), plot.matchCount() - 1);  // wraps around
  // Only the ranks shown are searched.
  plot.setHiddenRanks({1});
  plot.setSearch(QStringLiteral("bucket 2"));
  EXPECT_EQ(plot.matchCount(), 10);
  EXPECT_FALSE(changed.isEmpty());
}

TEST(TimelineFeatures, HiddenRanksAndFoldedLanesChangeTheRowsAndTheHitTest) {
  TimelinePlot plot;
  plot.resize(1000, 400);
  plot.addEvents(ddp_run(4, 4, 400));
  plot.replotIfDirty();
  EXPECT_EQ(plot.layout().count(), 12);
  plot.setHiddenRanks({1, 2});
  plot.setCollapsedRanks({3});
  plot.fitToData();
  plot.replotIfDirty();
  plot.replot();
  ASSERT_EQ(plot.layout().count(), 4);
  // The folded rank 3's comm third holds its all-reduce.
  const auto& comm = plot.data().row(TimelineRows::row(3, Lane::Comm));
  ASSERT_FALSE(comm.empty());
  const auto [lo, hi] = plot.layout().band(3, Lane::Comm);
  const QPointF pos(plot.xAxis->coordToPixel((comm[2].start_s + comm[2].end_s) / 2),
                    plot.yAxis->coordToPixel((lo + hi) / 2));
  const auto hit = plot.hitAt(pos);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rank, 3);
  EXPECT_EQ(hit->bar.phase, Phase::AllReduce);
}

TEST(TimelineFeatures, TheOverviewShowsTheWholeRunAndMovesTheView) {
  TimelinePlot plot;
  plot.resize(1000, 300);
  plot.addEvents(ddp_run(2, 30, 400));
  TimelineOverview overview(&plot.data(), &plot.layout());
  overview.resize(1000, 30);
  QObject::connect(&plot, &TimelinePlot::viewChanged, &overview, &TimelineOverview::setView);
  plot.zoomToRange(1.0, 2.0);
  EXPECT_NEAR(overview.start_s(), plot.data().earliest_s(), 1e-9);
  EXPECT_NEAR(overview.end_s(), plot.data().latest_s(), 1e-9);
  QSignalSpy centre(&overview, &TimelineOverview::centreRequested);
  overview.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&overview));
  QTest::mouseClick(&overview, Qt::LeftButton, {}, QPoint(int(overview.xAt(8.0)), 15));
  ASSERT_EQ(centre.size(), 1);
  EXPECT_NEAR(centre.at(0).at(0).toDouble(), 8.0, 0.05);
  overview.repaint();
  EXPECT_GT(overview.lastDrawnRects(), 0);
}
