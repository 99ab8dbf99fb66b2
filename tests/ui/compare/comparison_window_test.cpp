// The comparison window on the forum example: DDP on two RTX 4090s (1.5 s steps) vs one (1.2 s).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QPushButton>

#include "tests/ui/compare/compare_test_util.h"
#include "ui/models/config_diff_model.h"
#include "ui/models/metrics_model.h"
#include "ui/models/sweep_table_model.h"
#include "ui/plots/breakdown_plot.h"
#include "ui/plots/step_compare_plot.h"
#include "ui/plots/sweep_plot.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"

namespace tunebench::ui {
namespace {

using test::forum_log;

class ComparisonWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window.setTrials({forum_log("forum_single.jsonl"), forum_log("forum_ddp.jsonl")}, {QStringLiteral("single"), QStringLiteral("ddp x2")});
    window.resize(1500, 950);
    window.show();
    window.replotNow();
  }
  ComparisonWindow window;
};

TEST_F(ComparisonWindowTest, DiffListsExactlyTheDifferingKnobsHighlighted) {
  ConfigDiffModel* diff = window.configDiffModel();
  QAbstractItemModelTester tester(diff, QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_EQ(diff->keys(), (QStringList{QStringLiteral("strategy"), QStringLiteral("world_size")}));
  ASSERT_EQ(diff->columnCount(), 2);
  EXPECT_EQ(diff->headerData(0, Qt::Vertical, Qt::DisplayRole).toString(), QStringLiteral("Strategy"));  // knob label
  EXPECT_EQ(diff->index(0, 0).data().toString(), QStringLiteral("single"));
  EXPECT_EQ(diff->index(0, 1).data().toString(), QStringLiteral("ddp"));
  EXPECT_FALSE(diff->index(0, 0).data(ConfigDiffModel::DiffersFromBaselineRole).toBool());  // the baseline
  EXPECT_TRUE(diff->index(0, 1).data(ConfigDiffModel::DiffersFromBaselineRole).toBool());
  EXPECT_TRUE(diff->index(1, 1).data(Qt::BackgroundRole).isValid());
}

TEST_F(ComparisonWindowTest, MetricsShowStepTimeThroughputSpreadRatiosAndScaling) {
  MetricsModel* metrics = window.metricsModel();
  QAbstractItemModelTester tester(metrics, QAbstractItemModelTester::FailureReportingMode::Fatal);
  const int step = metrics->rowOf(QStringLiteral("step_ms"));
  ASSERT_GE(step, 0);
  EXPECT_DOUBLE_EQ(metrics->index(step, metrics->valueColumn(0)).data(MetricsModel::MedianRole).toDouble(), 1200.0);
  EXPECT_DOUBLE_EQ(metrics->index(step, metrics->valueColumn(1)).data(MetricsModel::MedianRole).toDouble(), 1500.0);
  EXPECT_NEAR(metrics->index(step, metrics->ratioColumn(1)).data(MetricsModel::RatioRole).toDouble(), 1.25, 1e-9);
  EXPECT_EQ(metrics->index(step, metrics->deltaColumn(1)).data().toString(), QStringLiteral("+300.0"));
  // Per GPU and total throughput are separate rows, never one "speed".
  const int perGpu = metrics->rowOf(QStringLiteral("tokens_per_s_per_gpu"));
  const int total = metrics->rowOf(QStringLiteral("tokens_per_s_total"));
  ASSERT_GE(perGpu, 0);
  ASSERT_GE(total, 0);
  EXPECT_NEAR(metrics->index(total, metrics->ratioColumn(1)).data(MetricsModel::RatioRole).toDouble(), 1.6, 1e-6);
  EXPECT_NEAR(metrics->index(perGpu, metrics->ratioColumn(1)).data(MetricsModel::RatioRole).toDouble(), 0.8, 1e-6);
  // GPU utilisation is always a row; these logs carry no samples, so it says so instead of 0.
  const int util = metrics->rowOf(QStringLiteral("gpu_util_pct"));
  ASSERT_GE(util, 0);
  EXPECT_EQ(metrics->index(util, metrics->valueColumn(1)).data().toString(), QStringLiteral("–"));
  EXPECT_TRUE(metrics->index(util, metrics->valueColumn(1)).data(Qt::ToolTipRole).toString().contains(QStringLiteral("no GPU")));
  const int scaling = metrics->rowOf(QStringLiteral("scaling_efficiency_pct"));
  ASSERT_GE(scaling, 0);
  EXPECT_NEAR(metrics->index(scaling, metrics->valueColumn(1)).data(MetricsModel::MedianRole).toDouble(), 80.0, 1e-6);
  // The spread is in the tooltip, n = measured steps.
  EXPECT_TRUE(metrics->index(step, metrics->valueColumn(1)).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("n = 5")));
}

TEST_F(ComparisonWindowTest, BreakdownBarsSumToTheStepTime) {
  BreakdownPlot* plot = window.breakdownPlot();
  ASSERT_EQ(plot->trialCount(), 2);
  const auto& trials = window.report().comparison.trials;
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(plot->stackedSum(i), trials[size_t(i)].breakdown.step_ms, 1e-9) << i;
  EXPECT_NEAR(plot->stackedSum(0), 1200.0, 1e-9);
  EXPECT_NEAR(plot->stackedSum(1), 1500.0, 1e-9);
  ASSERT_NE(plot->bars(analysis::Part::ExposedComm), nullptr);
  EXPECT_NEAR(plot->bars(analysis::Part::ExposedComm)->data()->at(1)->value, 200.0, 1e-9);
  EXPECT_EQ(plot->bars(analysis::Part::Idle), nullptr);  // zero everywhere: not drawn, not in the legend
  EXPECT_FALSE(plot->yAxis->label().isEmpty());
  EXPECT_TRUE(plot->yAxis->label().contains(QStringLiteral("ms")));
  int entries = 0;  // itemCount() counts the grid's cells, empty ones included
  for (int i = 0; i < plot->legend->itemCount(); ++i) entries += plot->legend->item(i) != nullptr;
  EXPECT_EQ(entries, 5);  // data wait, forward, backward, optimizer, exposed comm
}

TEST_F(ComparisonWindowTest, RepresentativeStepsShareOneTimeAxis) {
  StepComparePlot* plot = window.stepPlot();
  EXPECT_GT(plot->barCount(), 0);
  EXPECT_NEAR(plot->stepDuration_ms(0), 1200.0, 1.0);
  EXPECT_NEAR(plot->stepDuration_ms(1), 1500.0, 1.0);
  EXPECT_GE(plot->xAxis->range().upper, 1500.0);
  EXPECT_GT(plot->legend->itemCount(), 0);
}

TEST_F(ComparisonWindowTest, ThroughputSentenceIsShown) {
  const QString text = window.throughputText();
  EXPECT_TRUE(text.contains(QStringLiteral("the step is slower"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("total throughput is 1.60x"))) << text.toStdString();
}

TEST_F(ComparisonWindowTest, DiagnosisRanksTheExposedAllReduceFirstWithFloorAndAnswer) {
  DiagnosisView* view = window.diagnosisView();
  ASSERT_FALSE(view->entries().empty());
  const auto& first = view->entries().front();
  EXPECT_EQ(first.trial, 1);  // the DDP trial
  EXPECT_EQ(first.finding.kind, analysis::FindingKind::CommBound);
  EXPECT_NEAR(first.finding.impact_ms, 200.0, 1e-6);
  // Data wait (100 ms) is found too, ranked after it.
  bool dataAfter = false;
  for (size_t i = 1; i < view->entries().size(); ++i)
    dataAfter = dataAfter || view->entries()[i].finding.kind == analysis::FindingKind::DataBound;
  EXPECT_TRUE(dataAfter);
  const QString text = view->text();
  EXPECT_TRUE(text.contains(QStringLiteral("Communication floor: 400 ms"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("Can 2 GPUs beat one GPU on this interconnect? Yes"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("exposed all-reduce +200 ms"))) << text.toStdString();
}

TEST_F(ComparisonWindowTest, SuggestionButtonRequestsTheFollowUpTrial) {
  config::TrialConfig requested;
  QString title;
  int calls = 0;
  QObject::connect(&window, &ComparisonWindow::followUpRequested, &window,
                   [&](const config::TrialConfig& c, const QString& t) {
                     requested = c;
                     title = t;
                     ++calls;
                   });
  QPushButton* bf16 = nullptr;
  for (QPushButton* b : window.diagnosisView()->suggestionButtons())
    if (b->text() == QStringLiteral("Queue: compression bf16")) bf16 = b;
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->property("trial").toInt(), 1);
  bf16->click();
  ASSERT_EQ(calls, 1);
  EXPECT_EQ(title, QStringLiteral("compression bf16"));
  EXPECT_EQ(requested.compression, config::Compression::Bf16);
  EXPECT_EQ(requested.strategy, config::Strategy::Ddp);  // everything else from the DDP trial
  EXPECT_EQ(requested.world_size, 2);
  EXPECT_TRUE(config::validate(requested).empty());
}

TEST(ComparisonWindowSweep, TableAndChartOfTheSweptKnob) {
  const protocol::TrialLog base = forum_log("forum_ddp.jsonl");
  std::vector<protocol::TrialLog> logs = {test::with_knob(base, "grad_accum", 1, "ga1"), test::with_knob(base, "grad_accum", 2, "ga2"),
                                          test::with_knob(base, "grad_accum", 2, "ga2-repeat"), test::with_knob(base, "grad_accum", 4, "ga4")};
  ComparisonWindow window;
  window.setTrials(logs);
  window.setSweepKeys({"grad_accum"});
  window.show();
  window.replotNow();
  SweepTableModel* model = window.sweepModel();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  ASSERT_EQ(model->rowCount(), 3);  // the two grad_accum 2 trials are pooled
  EXPECT_EQ(model->index(0, 0).data().toString(), QStringLiteral("1"));
  EXPECT_EQ(model->index(1, 0).data().toString(), QStringLiteral("2"));
  EXPECT_EQ(model->index(1, 1 + SweepTableModel::Repeats).data().toString(), QStringLiteral("2"));
  EXPECT_EQ(window.sweepPlot()->pointCount(), 3);
  EXPECT_EQ(window.sweepPlot()->xAxis->label(), QStringLiteral("grad_accum"));
  EXPECT_EQ(window.tabs()->tabText(window.tabs()->currentIndex()), QStringLiteral("Sweep"));
}

TEST(ComparisonWindowSynthetic, SevenBillionDdpLogAlone) {
  ComparisonWindow window;
  window.setTrials({protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) + "/ui/synthetic-7b-ddp2.jsonl")});
  window.replotNow();
  EXPECT_EQ(window.configDiffModel()->rowCount(), 0);  // one trial: nothing differs
  const auto& m = window.report().comparison.trials.at(0);
  EXPECT_NEAR(window.breakdownPlot()->stackedSum(0), m.breakdown.step_ms, 1e-6);
  EXPECT_FALSE(window.diagnosisView()->entries().empty());
  EXPECT_GT(window.stepPlot()->barCount(), 0);
}

}  // namespace
}  // namespace tunebench::ui

namespace tunebench::ui {
namespace {

// Issue 40: the tiny CUDA-graph run whose two kernel-sampled steps (3.7 ms, 2.4 ms of it a copy)
// do not represent its 1.2 ms steps: the window says so above its findings, and none is data-bound.
TEST(ComparisonWindowSampling, ATrialWhoseSamplesDoNotRepresentItsRunSaysSoInTheDiagnosis) {
  ComparisonWindow window;
  window.setTrials({protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) +
                                                  "/idle/h200-tiny-fusedgraph-sampled.jsonl")},
                   {QStringLiteral("tiny graph")});
  window.resize(1200, 800);
  window.show();
  window.replotNow();
  const QString text = window.diagnosisView()->text();
  EXPECT_TRUE(text.contains(QStringLiteral("kernel samples not representative at this step length")))
      << text.toStdString();
  for (const auto& e : window.diagnosisView()->entries())
    EXPECT_NE(e.finding.kind, analysis::FindingKind::DataBound) << e.finding.title;
}

}  // namespace
}  // namespace tunebench::ui
