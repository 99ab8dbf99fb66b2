// The real window, offscreen, running the fake worker and replaying the synthetic recording.
#include <gtest/gtest.h>

#include "core/protocol/trial_log.h"
#include "tests/ui/wait_for.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "core/protocol/trial_log.h"
#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
protocol::TrialStatus status_of(MainWindow& w, int row) { return w.trialsModel()->record(row).status; }

// Fills the form the way a user does: preset, then typed values.
void fill_form(MainWindow& w, int ranks, int steps) {
  TrialForm* form = w.form();
  auto* presets = form->presetCombo();
  presets->setCurrentText(ranks > 1 ? "cpu-tiny-ddp" : "cpu-tiny");
  emit presets->activated(presets->currentIndex());
  auto* stepsBox = qobject_cast<QSpinBox*>(form->field("steps")->editor());
  stepsBox->clear();
  QTest::keyClicks(stepsBox, QString::number(steps));
  auto* warmup = qobject_cast<QSpinBox*>(form->field("warmup")->editor());
  warmup->clear();
  QTest::keyClicks(warmup, "1");
}
}  // namespace

TEST(MainWindow, DefaultsToTheCpuPresetWithoutAGpu) {
  auto w = make_window();
  EXPECT_EQ(w->form()->config().device, config::Device::Cpu);
  EXPECT_EQ(w->form()->config().model, "tiny");
  EXPECT_TRUE(w->form()->findChild<QLabel*>("devices")->text().contains("Test CPU"));
  EXPECT_FALSE(w->action("actionRun")->shortcut().isEmpty());
  EXPECT_EQ(w->action("actionStop")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Period));
}

TEST(MainWindow, RunsATwoRankTrialAndThePlotsFill) {
  auto w = make_window();
  QAbstractItemModelTester tester(w->trialsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
  fill_form(*w, 2, 8);
  ASSERT_EQ(w->form()->config().steps, 8);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  w->action("actionRun")->trigger();
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  TB_WAIT_FOR(status_of(*w, 0) == protocol::TrialStatus::Running, kTimeoutMs);
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  EXPECT_EQ(status_of(*w, 0), protocol::TrialStatus::Done) << w->trialsModel()->record(0).reason.toStdString();
  LiveView* live = w->liveView();
  EXPECT_EQ(live->stepTime()->stepPoints(0), 8);
  EXPECT_EQ(live->stepTime()->stepPoints(1), 8);
  EXPECT_EQ(live->stepTime()->throughputPoints(), 8);
  EXPECT_GT(live->timeline()->barCount(), 8u * 2u * 4u);
  EXPECT_TRUE(live->telemetry()->cpuMode());
  EXPECT_EQ(live->telemetry()->samples("rank 1", 0), 8);
  EXPECT_TRUE(live->progressText().contains("done: 8 steps")) << live->progressText().toStdString();
  const auto& record = w->trialsModel()->record(0);
  EXPECT_EQ(record.step, 8);
  EXPECT_FALSE(std::isnan(record.step_ms_median));
  w->logPane()->flush();
  EXPECT_TRUE(w->logPane()->toPlainText().contains(
      "[rank 1] fake worker rank 1 of 2 starting"));  // stderr is the rank's log, not "err"
}

TEST(MainWindow, StopEndsEveryRankAndTheWindowKeepsWorking) {
  auto w = make_window();
  fill_form(*w, 2, 100000);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  QTest::keyClick(w.get(), Qt::Key_R, Qt::ControlModifier);
  TB_WAIT_FOR(w->liveView()->timeline()->barCount() > 0, kTimeoutMs);
  const auto pids = w->queue()->runner()->pids();
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_TRUE(w->action("actionStop")->isEnabled());
  QTest::keyClick(w.get(), Qt::Key_Period, Qt::ControlModifier);
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  EXPECT_EQ(status_of(*w, 0), protocol::TrialStatus::Stopped);
  for (qint64 pid : pids) EXPECT_FALSE(process_alive(pid)) << pid;
  // Another trial runs afterwards.
  fill_form(*w, 1, 3);
  EXPECT_TRUE(w->runTrial());
  TB_WAIT_FOR((finished.size()) == (2), kTimeoutMs);
  EXPECT_EQ(status_of(*w, 1), protocol::TrialStatus::Done);
}

TEST(MainWindow, ACrashingRankTurnsTheRowRedWithTheReason) {
  FakeMode crash("crash", 1, 2);
  auto w = make_window();
  fill_form(*w, 2, 1000);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  ASSERT_EQ(status_of(*w, 0), protocol::TrialStatus::Failed);
  TrialsModel* m = w->trialsModel();
  const QString reason = m->data(m->index(0, TrialsModel::Reason), Qt::DisplayRole).toString();
  EXPECT_TRUE(reason.contains("rank 1")) << reason.toStdString();
  EXPECT_TRUE(reason.contains("SIGSEGV")) << reason.toStdString();
  EXPECT_GT(m->data(m->index(0, 0), Qt::BackgroundRole).value<QBrush>().color().red(), 200);
  EXPECT_TRUE(m->data(m->index(0, 0), Qt::ToolTipRole).toString().contains("null pointer"));
  for (qint64 pid : w->queue()->runner()->pids()) EXPECT_FALSE(process_alive(pid)) << pid;
  EXPECT_TRUE(w->liveView()->progressText().contains("failed at step")) << w->liveView()->progressText().toStdString();
  EXPECT_TRUE(w->action("actionRun")->isEnabled());  // the window keeps working
}

// A worker that cannot start fails the trial before any step: said so, not "failed at step 0 of
// 0", and the timeline keeps its width (TimelinePlotLegend.ATimelineWithoutStepsKeepsItsWidth).
TEST(MainWindow, AWorkerThatCannotStartFailsBeforeTheFirstStep) {
  MainWindow::Options o;
  o.workerProgram = QStringLiteral("/nonexistent/tunebench-worker");
  o.useSettings = false;
  o.detectDevices = false;
  o.devices = cpu_machine();
  MainWindow w(o);
  w.resize(1400, 900);
  w.show();
  fill_form(w, 2, 5);
  QSignalSpy finished(&w, &MainWindow::trialFinished);
  ASSERT_TRUE(w.runTrial());
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  ASSERT_EQ(status_of(w, 0), protocol::TrialStatus::Failed);
  const QString progress = w.liveView()->progressText();
  EXPECT_TRUE(progress.contains("failed at the start, before its first step")) << progress.toStdString();
  EXPECT_FALSE(progress.contains("of 0")) << progress.toStdString();
  EXPECT_TRUE(progress.contains("could not start")) << progress.toStdString();
}

TEST(MainWindow, InvalidFormDoesNotStartATrial) {
  auto w = make_window();
  w->form()->field("warmup")->setText("500");
  EXPECT_FALSE(w->runTrial());
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_FALSE(w->form()->field("warmup")->problem().isEmpty());
}

TEST(MainWindow, QueuedTrialsRunOneAfterAnother) {
  auto w = make_window();
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  fill_form(*w, 1, 3);
  w->action("actionQueue")->trigger();
  fill_form(*w, 2, 2);
  w->action("actionQueue")->trigger();
  EXPECT_EQ(w->trialsModel()->rowCount(), 2);
  TB_WAIT_FOR((finished.size()) == (2), kTimeoutMs);
  EXPECT_EQ(status_of(*w, 0), protocol::TrialStatus::Done);
  EXPECT_EQ(status_of(*w, 1), protocol::TrialStatus::Done);
  EXPECT_EQ(w->liveView()->stepTime()->stepPoints(1), 2);  // the views show the last trial
}

TEST(MainWindow, ReplaysARecordedGpuRunIntoTheLiveViews) {
  auto w = make_window();
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->replayLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl"), 20.0));
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  LiveView* live = w->liveView();
  EXPECT_EQ(live->stepTime()->stepPoints(0), 11);
  EXPECT_EQ(live->stepTime()->stepPoints(1), 11);
  EXPECT_FALSE(live->telemetry()->cpuMode());
  EXPECT_EQ(live->telemetry()->samples("GPU 0", 2), 11);
  EXPECT_GT(live->timeline()->barCount(), 0u);
  const auto& record = w->trialsModel()->record(0);
  EXPECT_TRUE(record.replay);
  EXPECT_EQ(record.status, protocol::TrialStatus::Done);
  EXPECT_EQ(record.config.model, "7b");  // learnt from the recorded hello
  EXPECT_FALSE(std::isnan(record.tokens_per_s));
}

TEST(MainWindow, ReplaysARealH200DdpLogIntoTheLiveViews) {
  // Recorded on two H200s by scripts/gpu-bench.sh dist (docs/BENCHMARKS.md).
  const std::string path = TUNEBENCH_TEST_DATA_DIR "/gpu/h200x2-7b-ddp-ckpt.jsonl";
  const auto log = protocol::read_trial_log_file(path);
  size_t intervals = 0;
  for (const auto& [rank, r] : log.ranks)
    for (const auto& s : r.steps) intervals += s.intervals.size();
  auto w = make_window();
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->replayLog(QString::fromStdString(path), 0));
  TB_WAIT_FOR((finished.size()) == (1), kTimeoutMs);
  LiveView* live = w->liveView();
  EXPECT_EQ(live->stepTime()->stepPoints(0), 11);
  EXPECT_EQ(live->stepTime()->stepPoints(1), 11);
  EXPECT_EQ(live->timeline()->barCount(), intervals) << "every recorded interval is drawn";
  EXPECT_FALSE(live->telemetry()->cpuMode());
  EXPECT_GT(live->telemetry()->samples("GPU 0", 0), 10);
  const auto& record = w->trialsModel()->record(0);
  EXPECT_EQ(record.config.model, "7b");
  EXPECT_EQ(record.config.strategy, config::Strategy::Ddp);
  EXPECT_EQ(record.status, protocol::TrialStatus::Done);
}

TEST(MainWindow, ClosingTheWindowStopsTheRanks) {
  auto w = make_window();
  fill_form(*w, 2, 100000);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(w->liveView()->timeline()->barCount() > 0, kTimeoutMs);
  const auto pids = w->queue()->runner()->pids();
  w->close();
  for (qint64 pid : pids) EXPECT_FALSE(process_alive(pid)) << pid;
}

TEST(MainWindow, RemembersTheLastTrialAndLayout) {
  {
    MainWindow::Options first;
    first.useSettings = true;  // the only test that touches QSettings (tests run in parallel)
    first.detectDevices = false;
    first.devices = cpu_machine();
    auto w = std::make_unique<MainWindow>(first);
    w->form()->applyPreset("cpu-data-bound");
    w->form()->field("steps")->setText("42");
    w->close();  // saves
  }
  MainWindow::Options o;
  o.useSettings = true;
  o.detectDevices = false;
  o.devices = cpu_machine();
  MainWindow again(o);
  EXPECT_EQ(again.form()->config().steps, 42);
  EXPECT_EQ(again.form()->config().sample_cpu_us, tunebench::config::trial_preset("cpu-data-bound")->sample_cpu_us);
  EXPECT_GT(again.form()->config().sample_cpu_us, 0.0);  // the preset's own, not the default's 0
}

TEST(MainWindow, ExportsThePlots) {
  auto w = make_window();
  ASSERT_TRUE(w->replayLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl"), 0));
  TB_WAIT_FOR(!w->isBusy(), kTimeoutMs);
  QTemporaryDir dir;
  const QStringList files = w->exportPlots(dir.filePath("run.png"));
  ASSERT_EQ(files.size(), 3);
  for (const QString& f : files) EXPECT_GT(QFileInfo(f).size(), 1000) << f.toStdString();
}

TEST(MainWindow, StopAndClearQueueDropsPendingTrials) {
  auto w = make_window();
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  fill_form(*w, 1, 100000);
  w->action("actionQueue")->trigger();
  fill_form(*w, 1, 3);
  w->action("actionQueue")->trigger();
  TB_WAIT_FOR(status_of(*w, 0) == protocol::TrialStatus::Running && w->queue()->runner()->isActive(), kTimeoutMs);
  w->action("actionStopAll")->trigger();
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  EXPECT_EQ(status_of(*w, 0), protocol::TrialStatus::Stopped);
  EXPECT_EQ(status_of(*w, 1), protocol::TrialStatus::Stopped);
  EXPECT_EQ(w->trialsModel()->record(1).reason, "removed from the queue");
  EXPECT_TRUE(w->queue()->isIdle());
}
