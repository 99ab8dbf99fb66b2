// Features of the window (issue 15) offscreen: light and dark themes readable in both, the
// timeline's tools in the real window (ranks shown, folded lanes, a span's summary, fit, find),
// and trials grouped by a knob with the table's selection.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

#include "tests/ui/windows/window_test_util.h"
#include "ui/models/status_colors.h"
#include "ui/models/trial_groups_model.h"
#include "ui/models/trials_model.h"
#include "ui/plots/range_summary_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_groups_view.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
void replay_all(MainWindow& w) {
  QSignalSpy finished(&w, &MainWindow::trialFinished);
  ASSERT_TRUE(w.replayLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/gpu/h200x2-7b-ddp-ckpt.jsonl"), 0));
  TB_WAIT_FOR(finished.size() == 1, 30000);
  w.liveView()->replotNow();
}
}  // namespace

TEST(Themes, DarkAndLightAreBothReadable) {
  auto w = make_window();
  ASSERT_NE(w->action(QStringLiteral("actionThemeDark")), nullptr);
  ASSERT_NE(w->action(QStringLiteral("actionThemeSystem")), nullptr);
  for (Theme theme : {Theme::Dark, Theme::Light}) {
    apply_theme(theme);
    QApplication::processEvents();
    const QPalette pal = QApplication::palette();
    const bool dark = theme == Theme::Dark;
    EXPECT_EQ(is_dark_palette(pal), dark);
    // Plots restyle on the palette change: background and axis text follow the theme.
    for (LivePlot* plot :
         {static_cast<LivePlot*>(w->liveView()->timeline()), static_cast<LivePlot*>(w->liveView()->stepTime()),
          static_cast<LivePlot*>(w->liveView()->telemetry())}) {
      plot->replot();
      const QColor back = plot->toPixmap(300, 200).toImage().pixelColor(2, 2);  // a corner: background
      const QColor text = plot->axisRects().front()->axis(QCPAxis::atLeft)->labelColor();
      EXPECT_EQ(back.lightness() < 128, dark) << plot->objectName().toStdString();
      EXPECT_GE(contrast_ratio(back, text), 4.5) << plot->objectName().toStdString();
    }
    // The meaningful colours read on the base colour.
    const QColor base = pal.color(QPalette::Base);
    EXPECT_GE(contrast_ratio(bad_color(), base), 4.5);
    EXPECT_GE(contrast_ratio(good_color(), base), 4.5);
    EXPECT_GE(contrast_ratio(failed_row_foreground(), failed_row_background()), 4.5);
    EXPECT_GE(contrast_ratio(changed_foreground(), changed_background()), 4.5);
    EXPECT_GE(contrast_ratio(note_foreground(), note_background()), 4.5);
  }
  apply_theme(Theme::System);
}

TEST(TimelineTools, RanksShownFoldedLanesAndASpansSummaryInTheWindow) {
  auto w = make_window();
  replay_all(*w);
  LiveView* view = w->liveView();
  TimelinePlot* timeline = view->timeline();
  ASSERT_EQ(timeline->layout().count(), 6);
  view->rankFilterField()->setText(QStringLiteral("1"));
  EXPECT_EQ(timeline->layout().count(), 3);
  EXPECT_EQ(timeline->layout().slot(0).rank, 1);
  view->rankFilterField()->setText(QString());
  w->action(QStringLiteral("actionCollapseLanes"))->trigger();
  EXPECT_EQ(timeline->layout().count(), 2);
  w->action(QStringLiteral("actionCollapseLanes"))->trigger();
  EXPECT_EQ(timeline->layout().count(), 6);
  // Fit, then a span of the run: the summary lists its phases.
  w->action(QStringLiteral("actionFitTimeline"))->trigger();
  timeline->replotIfDirty();
  EXPECT_FALSE(timeline->followLatest());
  const double t0 = timeline->data().earliest_s(), t1 = timeline->data().latest_s();
  timeline->setSelectedRange(t0 + (t1 - t0) * 0.4, t0 + (t1 - t0) * 0.6);
  EXPECT_TRUE(view->rangeSummaryPanel()->isVisibleTo(w.get()));
  ASSERT_GT(view->rangeSummary()->rowCount(), 3);
  bool allReduce = false;
  for (int r = 0; r < view->rangeSummary()->rowCount(); ++r)
    allReduce = allReduce || view->rangeSummary()->index(r, RangeSummaryModel::Phase).data().toString() ==
                                 QStringLiteral("all-reduce");
  EXPECT_TRUE(allReduce);
  timeline->clearSelectedRange();
  EXPECT_FALSE(view->rangeSummaryPanel()->isVisibleTo(w.get()));
  // Find: typed in the search field, counted, F3 steps to the next match.
  QTest::keyClicks(view->searchField(), QStringLiteral("all-reduce"));
  EXPECT_GT(timeline->matchCount(), 0);
  w->action(QStringLiteral("actionFindNext"))->trigger();
  EXPECT_EQ(timeline->currentMatch(), 0);
  EXPECT_TRUE(
      view->findChild<QLabel*>(QStringLiteral("timelineSearchCount"))->text().startsWith(QStringLiteral("1 of")));
}

TEST(TrialGroups, GroupByAKnobSharesTheTablesSelection) {
  auto w = make_window();
  for (int i = 0; i < 3; ++i) {
    TrialRecord r;
    r.id = QStringLiteral("r%1").arg(i);
    r.config.name = r.id.toStdString();
    r.config.strategy = i == 1 ? config::Strategy::Single : config::Strategy::Ddp;
    r.status = protocol::TrialStatus::Done;
    w->trialsModel()->upsert(r);
  }
  auto* groupBy = w->findChild<QComboBox*>(QStringLiteral("groupBy"));
  ASSERT_NE(groupBy, nullptr);
  groupBy->setCurrentIndex(groupBy->findData(QStringLiteral("strategy")));
  TrialGroupsView* tree = w->groupsView();
  EXPECT_TRUE(tree->isVisibleTo(w.get()));
  QAbstractItemModelTester tester(tree->groupsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  ASSERT_EQ(tree->groupsModel()->rowCount(), 2);
  // Selecting the ddp group's two trials selects their rows in the table (Compare, Export use it).
  const QModelIndex ddp = tree->groupsModel()->index(0, 0);
  tree->selectionModel()->select(
      QItemSelection(tree->groupsModel()->index(0, 0, ddp), tree->groupsModel()->index(1, 0, ddp)),
      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  QModelIndexList rows = w->trialsView()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 2);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows[0].row(), 0);
  EXPECT_EQ(rows[1].row(), 2);
  groupBy->setCurrentIndex(0);
  EXPECT_TRUE(w->trialsView()->isVisibleTo(w.get()));
}
