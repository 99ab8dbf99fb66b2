// Issue 15 items 6 and 7: the sweep dialog (Return in a values cell, the repeat count, Queue after
// a sweep) and the comparison's layout with three trials (every differing knob visible, no
// horizontal scrolling of the metrics, a label on every bar, step labels inside the plot), and
// integer knobs with integer ticks in the sweep chart.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

#include "tests/ui/compare/compare_test_util.h"
#include "tests/ui/wait_for.h"
#include "ui/models/config_diff_model.h"
#include "ui/plots/breakdown_plot.h"
#include "ui/plots/curves_plot.h"
#include "ui/plots/step_compare_plot.h"
#include "ui/plots/sweep_plot.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/sweep_dialog.h"

namespace tunebench::ui {
namespace {

std::vector<protocol::TrialLog> three_trials() {
  auto single = test::forum_log("forum_single.jsonl");
  auto ddp = test::forum_log("forum_ddp.jsonl");
  auto noP2p = test::with_knob(ddp, "nccl_env", nlohmann::json{{"NCCL_P2P_DISABLE", "1"}}, "ddp-no-p2p");
  noP2p = test::with_knob(noP2p, "bucket_mb", 100, "ddp-no-p2p");
  return {single, ddp, noP2p};
}

TEST(SweepDialogDefects, ReturnInAValuesCellDoesNotStartTheSweep) {
  SweepDialog dialog(*config::trial_preset("cpu-tiny-ddp"));
  dialog.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&dialog));
  std::vector<size_t> queued;  // sizes of the requests
  QObject::connect(&dialog, &SweepDialog::queueRequested, &dialog,
                   [&](const std::vector<config::TrialConfig>& configs) { queued.push_back(configs.size()); });
  auto* axes = dialog.findChild<QTableWidget*>(QStringLiteral("sweepAxes"));
  auto* values = qobject_cast<QLineEdit*>(axes->cellWidget(0, 1));
  ASSERT_NE(values, nullptr);
  values->setFocus();
  values->selectAll();
  QTest::keyClicks(values, QStringLiteral("1, 2"));
  QTest::keyClick(values, Qt::Key_Return);
  EXPECT_EQ(queued.size(), 0) << "Return in a values cell queued the sweep";
  // The repeat count typed last is the one used.
  auto* repeats = dialog.findChild<QSpinBox*>(QStringLiteral("sweepRepeats"));
  repeats->setFocus();
  repeats->selectAll();
  QTest::keyClicks(repeats, QStringLiteral("1"));
  dialog.queueButton()->click();
  ASSERT_EQ(queued.size(), 1);
  EXPECT_EQ(queued.at(0), 2u);
}

TEST(SweepDialogDefects, QueueIsEnabledAgainAfterASweep) {
  SweepDialog dialog(*config::trial_preset("cpu-tiny-ddp"));
  dialog.setAxes({{"grad_accum", {"1", "2"}}});
  dialog.setRepeats(1);
  dialog.queueButton()->click();
  dialog.setQueued({QStringLiteral("a"), QStringLiteral("b")});
  EXPECT_FALSE(dialog.queueButton()->isEnabled());
  for (const char* id : {"a", "b"}) {
    TrialOutcome o;
    o.trial_id = QString::fromLatin1(id);
    dialog.onTrialFinished(o);
  }
  EXPECT_TRUE(dialog.queueButton()->isEnabled());
}

TEST(ComparisonDefects, ThreeTrialsFitTheWindow) {
  ComparisonWindow w;
  w.resize(1500, 950);
  w.setTrials(three_trials(), {QStringLiteral("single"), QStringLiteral("ddp"), QStringLiteral("ddp no p2p")});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QTest::qWait(100);
  w.replotNow();
  // Every knob that differs is visible, the decisive NCCL row included.
  auto* diff = w.findChild<QTableView*>(QStringLiteral("configDiffView"));
  ASSERT_NE(diff, nullptr);
  const int rows = w.configDiffModel()->rowCount();
  ASSERT_GE(rows, 3);
  const int last = rows - 1;
  EXPECT_LE(diff->rowViewportPosition(last) + diff->rowHeight(last), diff->viewport()->height())
      << "the diff table hides rows";
  EXPECT_GE(diff->rowViewportPosition(0), 0);
  // The metrics of three trials need no horizontal scrolling.
  auto* metrics = w.findChild<QTableView*>(QStringLiteral("metricsView"));
  EXPECT_EQ(metrics->horizontalScrollBar()->maximum(), 0) << "the metrics table scrolls sideways";
  // Every breakdown bar has a label under it.
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(w.breakdownPlot()->xAxis->ticker());
  ASSERT_TRUE(ticker);
  EXPECT_EQ(ticker->ticks().size(), 3);
  w.breakdownPlot()->replot();
  const QVector<QString> labels = w.breakdownPlot()->xAxis->tickVectorLabels();
  int nonEmpty = 0;
  for (const QString& l : labels) nonEmpty += !l.isEmpty();
  EXPECT_EQ(nonEmpty, 3);
  // "step N: … ms" labels lie inside the plot.
  StepComparePlot* steps = w.stepPlot();
  steps->replot();
  const QRect area = steps->axisRect()->rect();
  for (int i = 0; i < steps->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(steps->item(i))) {
      if (!text->text().startsWith(QStringLiteral("step"))) continue;
      const QPointF anchor = text->position->pixelPosition();
      const QFontMetrics fm(text->font());
      const QRectF box(anchor, QSizeF(fm.horizontalAdvance(text->text()) + 6, fm.height()));
      const bool leftAligned = text->positionAlignment() & Qt::AlignLeft;
      const QRectF drawn = leftAligned ? box : box.translated(-box.width(), 0);
      EXPECT_TRUE(QRectF(area).adjusted(-1, -1, 1, 1).contains(drawn)) << text->text().toStdString() << " is clipped";
    }
}

TEST(SweepPlotDefects, IntegerKnobsGetIntegerTicks) {
  std::vector<protocol::TrialLog> logs;
  for (int a : {1, 2, 4})
    logs.push_back(test::with_knob(test::forum_log("forum_ddp.jsonl"), "grad_accum", a, "ga" + std::to_string(a)));
  ComparisonWindow w;
  w.resize(1200, 800);
  w.setTrials(logs);
  w.setSweepKeys({"grad_accum"});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  w.replotNow();
  w.sweepPlot()->replot();
  for (double t : w.sweepPlot()->xAxis->tickVector())
    if (w.sweepPlot()->xAxis->range().contains(t)) EXPECT_DOUBLE_EQ(t, std::round(t)) << "tick at " << t;
}

}  // namespace
}  // namespace tunebench::ui

namespace tunebench::ui {
namespace {

// Issue 15 (W&B's overlaid runs): every compared trial's step time and loss per step on one plot.
TEST(CurvesTab, OverlaysStepTimeAndLossOfEveryTrial) {
  ComparisonWindow w;
  w.resize(1400, 900);
  w.setTrials(three_trials(), {QStringLiteral("single"), QStringLiteral("ddp"), QStringLiteral("ddp no p2p")});
  CurvesPlot* curves = w.curvesPlot();
  ASSERT_NE(curves, nullptr);
  EXPECT_EQ(curves->curveCount(), 3);
  const auto single = test::forum_log("forum_single.jsonl");
  const int steps = int(single.ranks.begin()->second.steps.size());
  EXPECT_EQ(curves->points(0, 0), steps);
  EXPECT_EQ(curves->points(0, 1), steps);
  EXPECT_EQ(curves->points(2, 0),
            steps > 0 ? int(test::forum_log("forum_ddp.jsonl").ranks.begin()->second.steps.size()) : 0);
  EXPECT_EQ(curves->legend->itemCount(), 3);
  EXPECT_TRUE(curves->stepRect()->axis(QCPAxis::atLeft)->label().contains(QStringLiteral("ms")));
  bool tab = false;
  for (int i = 0; i < w.tabs()->count(); ++i) tab = tab || w.tabs()->tabText(i) == QStringLiteral("Curves");
  EXPECT_TRUE(tab);
}

}  // namespace
}  // namespace tunebench::ui
