// "Measure the link…" (issue 11 item 2) with the fake worker: where the action is, what the dialog
// says it will measure, and every way it can end without a measurement — one rank, a missing
// worker, a rank that fails, Cancel while it waits behind a running trial — each a message in
// the dialog, never a crash. The real probe over Gloo is in real_worker_test.cpp.
#include <gtest/gtest.h>

#include <QAction>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QToolButton>

#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/wait_for.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/link_probe_controller.h"
#include "ui/windows/link_probe_dialog.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

config::TrialConfig cpu_ddp() {
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.device = config::Device::Cpu;
  return c;
}

std::unique_ptr<MainWindow> window_with_worker(const QString& worker) {
  MainWindow::Options o;
  o.workerProgram = worker;
  o.useSettings = false;
  o.detectDevices = false;
  o.devices = cpu_machine();
  auto w = std::make_unique<MainWindow>(o);
  w->resize(1400, 900);
  w->show();
  return w;
}

LinkProbeDialog* open_probe(MainWindow& w) {
  w.action(QStringLiteral("actionMeasureLink"))->trigger();
  LinkProbeDialog* d = w.linkProbe()->dialog();
  EXPECT_NE(d, nullptr);
  if (d) {
    EXPECT_TRUE(d->isVisible());
  }
  return d;
}

}  // namespace

TEST(MeasureLink, TheActionIsInTheTrialMenuAndThePredictionDock) {
  auto w = make_window();
  w->form()->setConfig(cpu_ddp());
  QAction* action = w->action(QStringLiteral("actionMeasureLink"));
  ASSERT_NE(action, nullptr);
  EXPECT_TRUE(w->menu(QStringLiteral("menuTrial"))->actions().contains(action));
  auto* button = w->prediction()->panel()->findChild<QToolButton*>(QStringLiteral("measureLinkButton"));
  ASSERT_NE(button, nullptr);
  EXPECT_EQ(button->defaultAction(), action);
  EXPECT_TRUE(button->isVisibleTo(w.get()));

  button->click();
  LinkProbeDialog* d = w->linkProbe()->dialog();
  ASSERT_NE(d, nullptr);
  const QString what = d->findChild<QLabel*>(QStringLiteral("linkProbeWhat"))->text();
  EXPECT_TRUE(what.contains("<b>2 ranks</b>")) << what.toStdString();
  EXPECT_TRUE(what.contains("CPU processes (Gloo) on this machine")) << what.toStdString();
  EXPECT_TRUE(what.contains("link probe, 2 x cpu")) << what.toStdString();
  EXPECT_EQ(d->maxMb()->value(), 16.0);  // the CPU's default range
  EXPECT_TRUE(d->measureButton()->isEnabled());
  EXPECT_EQ(w->linkProbe()->probeConfig().name, "link probe, 2 x cpu");
  // A second trigger raises the same dialog.
  action->trigger();
  EXPECT_EQ(w->linkProbe()->dialog(), d);
}

TEST(MeasureLink, OneRankHasNoLinkToMeasure) {
  auto w = make_window();
  w->form()->applyPreset("cpu-tiny");  // one rank
  LinkProbeDialog* d = open_probe(*w);
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->measureButton()->isEnabled());
  EXPECT_TRUE(d->statusText().contains("two or more ranks")) << d->statusText().toStdString();
}

TEST(MeasureLink, AMissingWorkerIsAMessageNotACrash) {
  auto w = window_with_worker(QStringLiteral("/nonexistent/tunebench-worker"));
  w->form()->setConfig(cpu_ddp());
  LinkProbeDialog* d = open_probe(*w);
  ASSERT_NE(d, nullptr);
  d->maxMb()->setValue(1);
  d->measureButton()->click();
  TB_WAIT_FOR(d->state() == LinkProbeDialog::State::Failed, kTimeoutMs);
  EXPECT_TRUE(d->statusText().contains("The probe failed")) << d->statusText().toStdString();
  EXPECT_TRUE(d->statusText().contains("/nonexistent/tunebench-worker")) << d->statusText().toStdString();
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_EQ(w->trialsModel()->record(0).status, protocol::TrialStatus::Failed);
  EXPECT_EQ(w->trialsModel()->record(0).config.name, "link probe, 2 x cpu");
  EXPECT_TRUE(d->measureButton()->isEnabled());  // it can be tried again
  EXPECT_EQ(d->cancelButton()->text(), "Close");
}

TEST(MeasureLink, ARankThatFailsIsAMessageNamingIt) {
  qputenv("TUNEBENCH_FAKE_MODE", "exit:4");
  qputenv("TUNEBENCH_FAKE_RANK", "1");
  qputenv("TUNEBENCH_FAKE_AT_STEP", "1");
  auto w = make_window();
  w->form()->setConfig(cpu_ddp());
  LinkProbeDialog* d = open_probe(*w);
  ASSERT_NE(d, nullptr);
  d->measureButton()->click();
  TB_WAIT_FOR(d->state() == LinkProbeDialog::State::Failed, kTimeoutMs);
  qunsetenv("TUNEBENCH_FAKE_MODE");
  qunsetenv("TUNEBENCH_FAKE_RANK");
  qunsetenv("TUNEBENCH_FAKE_AT_STEP");
  EXPECT_TRUE(d->statusText().contains("rank 1 failed")) << d->statusText().toStdString();
  EXPECT_EQ(w->trialsModel()->record(0).status, protocol::TrialStatus::Failed);
}

TEST(MeasureLink, CancelWhileItWaitsBehindARunningTrialDropsItFromTheQueue) {
  qputenv("TUNEBENCH_FAKE_STEP_MS", "50");
  auto w = make_window();
  config::TrialConfig longRun = cpu_ddp();
  longRun.steps = 100000;
  w->form()->setConfig(longRun);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(w->queue()->runner()->isActive(), kTimeoutMs);
  LinkProbeDialog* d = open_probe(*w);
  ASSERT_NE(d, nullptr);
  d->measureButton()->click();
  EXPECT_EQ(d->state(), LinkProbeDialog::State::Waiting);
  EXPECT_TRUE(d->statusText().contains("Queued after the running trial")) << d->statusText().toStdString();
  EXPECT_EQ(d->cancelButton()->text(), "Cancel");
  ASSERT_EQ(w->queue()->pending().size(), 1);
  const QString probeId = w->linkProbe()->trialId();
  EXPECT_EQ(w->queue()->pending().front().id, probeId);
  ASSERT_TRUE(w->queue()->pending().front().link_probe.has_value());

  d->cancelButton()->click();
  EXPECT_EQ(d->state(), LinkProbeDialog::State::Cancelled);
  EXPECT_TRUE(d->isVisible());  // Cancel keeps the dialog, with what happened
  EXPECT_TRUE(w->queue()->pending().isEmpty());
  EXPECT_TRUE(w->queue()->runner()->isActive());  // the user's trial runs on
  const TrialRecord* probe = w->trialsModel()->find(probeId);
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->status, protocol::TrialStatus::Stopped);
  EXPECT_EQ(probe->reason, "removed from the queue");
  w->queue()->stopAll();
  TB_WAIT_FOR(!w->queue()->runner()->isActive(), kTimeoutMs);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
}

// The probe goes the way every trial goes: the form's ranks over SSH are probed over SSH, so the
// launch preview asks first and shows the probe's arguments on the hosts' command lines.
TEST(MeasureLink, AProbeOverSshIsPreviewedLikeAnySshTrial) {
  auto w = make_window();
  config::TrialConfig c = cpu_ddp();
  c.launcher = config::Launcher::Ssh;
  ASSERT_FALSE(config::parse_ssh_hosts("hostA ranks=1; hostB ranks=1", c.ssh_hosts));
  w->form()->setConfig(c);
  LinkProbeDialog* d = open_probe(*w);
  ASSERT_NE(d, nullptr);
  const QString what = d->findChild<QLabel*>(QStringLiteral("linkProbeWhat"))->text();
  EXPECT_TRUE(what.contains("on hostA, hostB over SSH")) << what.toStdString();
  d->minMb()->setValue(1);
  d->maxMb()->setValue(4);
  d->measureButton()->click();
  LaunchPreviewDialog* preview = w->launcher()->pendingPreview();
  ASSERT_NE(preview, nullptr);
  EXPECT_EQ(d->state(), LinkProbeDialog::State::Waiting);
  EXPECT_EQ(preview->windowTitle(), "Run on hostA, hostB over SSH?");
  EXPECT_TRUE(preview->previewText().contains("--probe-link --probe-min-mb 1 --probe-max-mb 4 </dev/null"))
      << preview->previewText().toStdString();
  EXPECT_TRUE(preview->previewText().contains("\"name\":\"link probe, 2 x cpu\"")) << preview->previewText().toStdString();
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  d->cancelButton()->click();  // cancels the preview's question too
  EXPECT_EQ(w->launcher()->pendingPreview(), nullptr);
  EXPECT_EQ(d->state(), LinkProbeDialog::State::Cancelled);
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_FALSE(w->queue()->runner()->isActive());
}
