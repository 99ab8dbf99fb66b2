// Issue 15 items 6 and 7: the sweep dialog (Return in a values cell, the repeat count, Queue after
// a sweep) and the comparison's layout with three trials (every differing knob visible, no
// horizontal scrolling of the metrics, a label on every bar, step labels inside the plot), and
// integer knobs with integer ticks in the sweep chart.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFontMetrics>
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
#include "ui/models/metrics_model.h"
#include "ui/plots/breakdown_plot.h"
#include "ui/plots/curves_plot.h"
#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/step_compare_plot.h"
#include "ui/plots/sweep_plot.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"
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

// Issue 44: the comparison window ignored Esc and Ctrl+W.
TEST(ComparisonDefects, EscAndCtrlWCloseTheWindow) {
  for (const QKeySequence& key : {QKeySequence(Qt::Key_Escape), QKeySequence(QKeySequence::Close)}) {
    ComparisonWindow w;
    w.setTrials(three_trials(), {QStringLiteral("single"), QStringLiteral("ddp"), QStringLiteral("ddp no p2p")});
    w.show();
    w.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&w));
    QTest::keySequence(&w, key);
    TB_EXPECT_WAIT_FOR(!w.isVisible(), 3000) << key.toString().toStdString();
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

// ---- one name everywhere, honest colours, CPU ranks, whole words ----

// Two CPU trials shaped like the forum pair: one rank, then two Gloo ranks.
std::vector<protocol::TrialLog> cpu_pair() {
  auto single = test::with_knob(test::forum_log("forum_single.jsonl"), "device", std::string("cpu"), "cpu-single");
  auto ddp = test::with_knob(test::forum_log("forum_ddp.jsonl"), "device", std::string("cpu"), "cpu-ddp");
  for (auto* log : {&single, &ddp})
    for (auto& [rank, r] : log->ranks)
      if (r.hello) r.hello->device = "cpu";
  return {single, ddp};
}

TEST(ComparisonNames, TheHeadlineAndSentencesUseTheNamesTheTitlesUse) {
  // The headline said "w-7b-ddp-ckpt-nop2p" (the file's own name) where the titles said the trial's.
  ComparisonWindow w;
  auto logs = three_trials();
  logs.resize(2);
  w.setTrials(logs, {QStringLiteral("One RTX 4090"), QStringLiteral("Two RTX 4090s")});
  EXPECT_TRUE(w.throughputText().contains(QStringLiteral("Two RTX 4090s vs One RTX 4090")))
      << w.throughputText().toStdString();
  const QString diagnosis = w.diagnosisView()->text();
  EXPECT_TRUE(diagnosis.contains(QStringLiteral("Two RTX 4090s step"))) << diagnosis.toStdString();
  EXPECT_FALSE(diagnosis.contains(QStringLiteral("forum"))) << diagnosis.toStdString();
}

TEST(ComparisonColours, RatiosOfValuesInsideTheNoiseAreNotColoured) {
  // 0.0 vs 0.0 ms read "1.60x" in red.
  analysis::Comparison c;
  c.trials.resize(2);
  c.baseline = 0;
  analysis::MetricRow row;
  row.key = "data_wait_ms";
  row.label = "Data wait";
  row.unit = "ms";
  row.better = analysis::Better::Lower;
  auto spread = [](double median, double p25, double p75) {
    analysis::Spread s;
    s.n = 10;
    s.median = median;
    s.p25 = p25;
    s.p75 = p75;
    s.mean = median;
    s.min = p25;
    s.max = p75;
    return s;
  };
  row.values = {spread(0.025, 0.02, 0.03), spread(0.04, 0.03, 0.05)};  // both show as 0.0 ms
  row.delta = {std::nullopt, 0.015};
  row.ratio = {std::nullopt, 1.6};
  row.ratio_low = {std::nullopt, 1.0};
  row.ratio_high = {std::nullopt, 2.5};
  c.metrics.push_back(row);
  analysis::MetricRow step = row;
  step.key = "step_ms";
  step.label = "Step time";
  step.values = {spread(1200, 1190, 1210), spread(1500, 1490, 1510)};  // well apart
  step.delta = {std::nullopt, 300};
  step.ratio = {std::nullopt, 1.25};
  step.ratio_low = {std::nullopt, 1490.0 / 1210};
  step.ratio_high = {std::nullopt, 1510.0 / 1190};
  c.metrics.push_back(step);
  analysis::MetricRow wide = step;  // overlapping quartiles: the difference is within the noise
  wide.key = "comm_ms";
  wide.label = "Communication";
  wide.values = {spread(100, 80, 130), spread(110, 85, 140)};
  wide.ratio = {std::nullopt, 1.1};
  wide.ratio_low = {std::nullopt, 85.0 / 130};
  wide.ratio_high = {std::nullopt, 140.0 / 80};
  c.metrics.push_back(wide);
  // The rows carry the analysis' one verdict on the noise, as compare() puts it there; the step
  // the times are measured against is the trials' own.
  c.trials[0].step_ms = spread(1200, 1190, 1210);
  c.trials[1].step_ms = spread(1500, 1490, 1510);
  for (auto& r : c.metrics)
    r.beyond_noise = {false, analysis::beyond_noise(*r.values[0], *r.values[1], r.unit, c.trials[0], c.trials[1])};
  MetricsModel model;
  model.setComparison(c, {QStringLiteral("a"), QStringLiteral("b")});
  const int ratio = model.ratioColumn(1);
  ASSERT_GT(ratio, 0);
  EXPECT_FALSE(model.index(model.rowOf("data_wait_ms"), ratio).data(Qt::ForegroundRole).isValid());
  EXPECT_FALSE(model.index(model.rowOf("comm_ms"), ratio).data(Qt::ForegroundRole).isValid());
  EXPECT_TRUE(model.index(model.rowOf("step_ms"), ratio).data(Qt::ForegroundRole).isValid());  // still red
}

TEST(ComparisonCpu, CpuRanksAreNeverCalledGpus) {
  // "Can 2 GPUs beat one GPU on this interconnect?" and "Scaling efficiency vs 1 GPU" for Gloo ranks.
  ComparisonWindow w;
  w.setTrials(cpu_pair(), {QStringLiteral("one rank"), QStringLiteral("two ranks")});
  const QString diagnosis = w.diagnosisView()->text();
  EXPECT_FALSE(diagnosis.contains(QStringLiteral("GPU"))) << diagnosis.toStdString();
  MetricsModel* m = w.metricsModel();
  for (int r = 0; r < m->rowCount(); ++r) {
    const QString label = m->index(r, 0).data().toString();
    EXPECT_FALSE(label.contains(QStringLiteral("GPU"))) << label.toStdString();
  }
}

TEST(BreakdownLabels, NeighbouringBarNamesDoNotRunIntoEachOther) {
  // Four trials in the window at 1600 x 1000: names wrapped at 18 characters were wider than a bar's
  // share of the axis, and "NCCL_P2P_DISABLE=1" ran into "compile fused" beside it.
  ComparisonWindow w;
  w.resize(1600, 1000);
  auto logs = three_trials();
  logs.push_back(test::with_knob(logs[1], "compile", "fused", "ddp-fused"));
  w.setTrials(logs, {QStringLiteral("7B single GPU, checkpointing"), QStringLiteral("7B DDP x2, checkpointing"),
                     QStringLiteral("7B DDP x2, checkpointing, NCCL_P2P_DISABLE=1"),
                     QStringLiteral("7B DDP x2, checkpointing, compile fused")});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  BreakdownPlot* plot = w.breakdownPlot();
  // A layout at the window's size, then the replot that fits the names to it (no waiting on time).
  plot->replot();
  plot->markDirty();
  plot->replotIfDirty();
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(plot->xAxis->ticker());
  ASSERT_TRUE(ticker);
  ASSERT_EQ(ticker->ticks().size(), 4);
  const QFontMetrics metrics(plot->xAxis->tickLabelFont());
  const auto widest = [&](const QString& label) {
    int most = 0;
    for (const QString& line : label.split(QLatin1Char('\n'))) most = std::max(most, metrics.horizontalAdvance(line));
    return most;
  };
  for (int i = 0; i + 1 < 4; ++i) {
    const double gap = plot->xAxis->coordToPixel(i + 1) - plot->xAxis->coordToPixel(i);
    const QString a = ticker->ticks().value(i), b = ticker->ticks().value(i + 1);
    EXPECT_LE((widest(a) + widest(b)) / 2.0, gap)
        << a.toStdString() << " | " << b.toStdString() << " in " << gap << " px";
  }
  EXPECT_TRUE(ticker->ticks().value(2).contains(QStringLiteral("NCCL_P2P_")))
      << "the name is all there: " << ticker->ticks().value(2).toStdString();
  EXPECT_TRUE(ticker->ticks().value(2).contains(QStringLiteral("DISABLE=1"))) << ticker->ticks().value(2).toStdString();
}

TEST(BreakdownLabels, AWordWiderThanALineBreaksAfterItsUnderscores) {
  const QFontMetrics metrics(QApplication::font());
  const double width = metrics.horizontalAdvance(QStringLiteral("NCCL_P2P_DIS"));
  EXPECT_EQ(BreakdownPlot::wrapLabel(QStringLiteral("#3 NCCL_P2P_DISABLE=1"), width, metrics),
            QStringLiteral("#3\nNCCL_P2P_\nDISABLE=1"));
  EXPECT_EQ(BreakdownPlot::wrapLabel(QStringLiteral("a b"), width, metrics), QStringLiteral("a b"));
  // Five lines' worth: the fourth ends in an ellipsis.
  EXPECT_EQ(
      BreakdownPlot::wrapLabel(QStringLiteral("checkpointing checkpointing checkpointing checkpointing checkpointing"),
                               width, metrics),
      QStringLiteral("checkpointing\ncheckpointing\ncheckpointing\ncheckpointing …"));
}

TEST(BreakdownLabels, BarLabelsBreakBetweenWordsAndSayMeanAndMedian) {
  // "7B DDP x2, checkpointing, no peer-to-peer" was cut to "…checkpoint" / "ing, no pe…".
  ComparisonWindow w;
  w.resize(1500, 950);
  const QString long1 = QStringLiteral("7B DDP x2, checkpointing, no peer-to-peer over PCIe");
  const QString long2 = QStringLiteral("7B single GPU, bf16, compile fused and CUDA graphs");
  auto logs = three_trials();
  logs.resize(2);
  w.setTrials(logs, {long2, long1});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  auto ticker = qSharedPointerCast<QCPAxisTickerText>(w.breakdownPlot()->xAxis->ticker());
  ASSERT_TRUE(ticker);
  const QStringList words = (long1 + QLatin1Char(' ') + long2).split(QLatin1Char(' '))
                            << QStringLiteral("#1") << QStringLiteral("#2");
  for (const QString& label : ticker->ticks().values())
    for (const QString& word :
         QString(label).replace(QLatin1Char('\n'), QLatin1Char(' ')).split(QLatin1Char(' '), Qt::SkipEmptyParts))
      EXPECT_TRUE(words.contains(word) || word == QStringLiteral("…")) << "cut word: " << word.toStdString();
  // The number on a bar is a mean; where a median step is shown too, both are named.
  bool mean = false;
  for (int i = 0; i < w.breakdownPlot()->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(w.breakdownPlot()->item(i)))
      mean = mean || (text->text().contains(QStringLiteral("mean")) && text->text().contains(QStringLiteral("median")));
  EXPECT_TRUE(mean) << "the bar's number says neither mean nor median";
}

TEST(BreakdownLabels, FiguresOfBarsOfTheSameHeightDoNotTouch) {
  // Four bars of 340 ms in a narrow plot: "mean 340 ms (median 340 ms)" above each ran into its
  // neighbours'. The right one of two that would touch now stands above the left one.
  BreakdownPlot plot;
  plot.resize(420, 420);
  plot.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&plot));
  analysis::MeanBreakdown b;
  b.step_ms = 340;
  b.part_ms[size_t(analysis::Part::Forward)] = 100;
  b.part_ms[size_t(analysis::Part::Backward)] = 240;
  plot.setTrials({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")}, {b, b, b, b},
                 {340, 340, 340, 340});
  plot.replot();  // the layout at this size, then the replot that places the figures in it
  plot.markDirty();
  plot.replotIfDirty();
  plot.replot();
  std::vector<QRectF> boxes;
  for (int i = 0; i < plot.itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot.item(i)))
      boxes.emplace_back(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition());
  ASSERT_EQ(boxes.size(), 4u);
  for (size_t i = 0; i + 1 < boxes.size(); ++i)
    EXPECT_FALSE(boxes[i].intersects(boxes[i + 1])) << "figures " << i << " and " << i + 1 << " touch";
  for (const QRectF& box : boxes)
    EXPECT_GE(box.top(), plot.axisRect()->top() - 1) << "a figure is cut at the top of the plot";
}

TEST(StepCompareDefects, TheLegendsNamesAreWholeInANarrowPlot) {
  // In the comparison at 1600 x 1000 the representative steps' legend held every phase in one row
  // and cut the names ("host→de", "backw", "all-red"): it now takes as many columns as fit.
  ComparisonWindow w;
  w.resize(1600, 1000);
  auto logs = three_trials();
  w.setTrials(logs, {QStringLiteral("single"), QStringLiteral("ddp"), QStringLiteral("ddp no p2p")});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  StepComparePlot* plot = w.stepPlot();
  plot->resize(380, plot->height());
  plot->replot();
  plot->markDirty();
  plot->replotIfDirty();
  plot->replot();
  int names = 0;
  for (int i = 0; i < plot->legend->itemCount(); ++i) {
    auto* item = dynamic_cast<PhaseLegendItem*>(plot->legend->item(i));
    if (!item) continue;
    const QString name = phase_name(item->phase());
    EXPECT_LE(QFontMetrics(item->font()).horizontalAdvance(name), item->textRect().width() + 1) << name.toStdString();
    ++names;
  }
  EXPECT_GE(names, 4);
  EXPECT_GT(plot->legend->rowCount(), 1) << "every name in one row cannot fit 380 px";
  EXPECT_LE(plot->legend->outerRect().right(), plot->width()) << "the legend runs past the plot's edge";
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
