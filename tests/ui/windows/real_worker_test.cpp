// The window driving the REAL tunebench-worker on the CPU (libtorch, Gloo): a small custom model,
// single process and 2-rank DDP; events arrive, the plots fill, the trial lands in the session
// file; Stop ends every rank; a crashing worker is reported. The worker is the build's own
// (TUNEBENCH_REAL_WORKER), else $TUNEBENCH_WORKER; without either the tests skip and say so.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>

#include "core/store/session_store.h"
#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/link_probe_controller.h"
#include "ui/windows/link_probe_dialog.h"
#include "ui/windows/live_view.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
// libtorch start-up and Gloo rendezvous on a loaded 2-core machine take a while.
constexpr int kRealWorkerTimeoutMs = 180000;  // a real worker, built in RelWithDebInfo

QString real_worker() {
  const QString built = QStringLiteral(TUNEBENCH_REAL_WORKER);
  if (!built.isEmpty() && QFileInfo(built).isExecutable()) return built;
  const QString env = qEnvironmentVariable("TUNEBENCH_WORKER");
  if (!env.isEmpty() && QFileInfo(env).isExecutable()) return env;
  return {};
}

#define REQUIRE_REAL_WORKER()                                                                          \
  const QString worker = real_worker();                                                                \
  if (worker.isEmpty())                                                                                \
  GTEST_SKIP() << "no real tunebench-worker: this build has no libtorch (TUNEBENCH_BUILD_WORKER) and " \
                  "TUNEBENCH_WORKER is not set to a built worker"

std::unique_ptr<MainWindow> make_real_window(const QString& worker) {
  MainWindow::Options o;
  o.workerProgram = worker;
  o.useSettings = false;
  o.detectDevices = false;
  o.devices = cpu_machine();
  auto w = std::make_unique<MainWindow>(o);
  w->resize(1400, 900);
  w->show();
  w->activateWindow();
  EXPECT_TRUE(QTest::qWaitForWindowActive(w.get()));
  return w;
}

// A model small enough that ~10 steps take seconds on 2 shared cores.
config::TrialConfig small_config(int world, int steps) {
  config::TrialConfig c = config::trial_presets().at(world > 1 ? 1 : 0).config;  // cpu-tiny(-ddp)
  c.name = world > 1 ? "real ddp2" : "real single";
  c.model = "custom";
  c.dims = {64, 2, 4, 176, 96};
  c.seq_len = 32;
  c.micro_batch = 2;
  c.steps = steps;
  c.warmup = 1;
  c.world_size = world;
  c.strategy = world > 1 ? config::Strategy::Ddp : config::Strategy::Single;
  c.gpu_sample_hz = 5;
  return c;
}

void run_to_completion(MainWindow& w, int world, int steps) {
  w.form()->setConfig(small_config(world, steps));
  ASSERT_EQ(w.form()->validateAndShow(), 0);
  QSignalSpy finished(&w, &MainWindow::trialFinished);
  ASSERT_TRUE(w.runTrial());
  TB_WAIT_FOR(finished.size() == 1, kRealWorkerTimeoutMs);
  const TrialRecord& r = w.trialsModel()->record(w.trialsModel()->rowCount() - 1);
  ASSERT_EQ(r.status, protocol::TrialStatus::Done) << r.reason.toStdString() << "\n" << r.stderr_tail.toStdString();
  LiveView* live = w.liveView();
  for (int rank = 0; rank < world; ++rank) EXPECT_EQ(live->stepTime()->stepPoints(rank), steps) << rank;
  EXPECT_EQ(live->stepTime()->throughputPoints(), steps);
  EXPECT_GT(live->timeline()->barCount(), size_t(steps * world * 3));
  EXPECT_TRUE(live->telemetry()->cpuMode());
  EXPECT_EQ(r.step, steps);
  EXPECT_FALSE(std::isnan(r.step_ms_median));

  // The trial is in the session file: reopen it the way another process would.
  const qint64 id = w.session()->storeId(r.id);
  const auto s = store::SessionStore::open(w.session()->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  const store::TrialInfo info = s.trial(id);
  EXPECT_EQ(info.status, protocol::TrialStatus::Done);
  EXPECT_EQ(info.step_count, int64_t(steps) * world);
  EXPECT_EQ(s.trial_environment(id).size(), size_t(world));
  EXPECT_EQ(s.trial_summaries(id).size(), size_t(world));
}
}  // namespace

TEST(RealWorker, SingleProcessRunFillsThePlotsAndTheSession) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  run_to_completion(*w, 1, 8);
}

TEST(RealWorker, TwoRankDdpOverGlooFillsThePlotsAndTheSession) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  run_to_completion(*w, 2, 10);
  // Resident memory is in every CPU sample; CPU % needs two readings of /proc, which a run of
  // ten fast steps may not give a rank (the count then depends on the machine's speed).
  EXPECT_GT(w->liveView()->telemetry()->samples("rank 1", 1), 0);
}

TEST(RealWorker, StopEndsEveryRank) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  w->form()->setConfig(small_config(2, 100000));
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  // Both ranks have shown two steps (a loaded machine can leave one rank's event behind the
  // other's): those four steps must be stored after Stop.
  TB_WAIT_FOR(w->liveView()->stepTime()->stepPoints(0) >= 2 && w->liveView()->stepTime()->stepPoints(1) >= 2,
              kRealWorkerTimeoutMs);
  const auto pids = w->queue()->runner()->pids();
  ASSERT_EQ(pids.size(), 2u);
  w->stopTrial();
  TB_WAIT_FOR(finished.size() == 1, 30000);
  EXPECT_EQ(w->trialsModel()->record(0).status, protocol::TrialStatus::Stopped);
  for (qint64 pid : pids) EXPECT_FALSE(process_alive(pid)) << pid;
  const auto info = w->session()->trialInfo(w->trialsModel()->record(0).id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, protocol::TrialStatus::Stopped);
  EXPECT_GE(info->step_count, 4);
}

// A worker that dies mid-run (SIGKILL from outside, as the OOM killer would) is reported in plain
// words; the other rank is stopped; the window keeps working.
TEST(RealWorker, ACrashingWorkerIsReported) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  w->form()->setConfig(small_config(2, 100000));
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(w->liveView()->stepTime()->stepPoints(1) >= 2, kRealWorkerTimeoutMs);
  const auto pids = w->queue()->runner()->pids();
  ASSERT_EQ(pids.size(), 2u);
  ::kill(pid_t(pids[1]), SIGKILL);
  TB_WAIT_FOR(finished.size() == 1, 60000);
  const TrialRecord& r = w->trialsModel()->record(0);
  ASSERT_EQ(r.status, protocol::TrialStatus::Failed);
  EXPECT_TRUE(r.reason.contains("rank 1")) << r.reason.toStdString();
  EXPECT_TRUE(r.reason.contains("SIGKILL")) << r.reason.toStdString();
  for (qint64 pid : pids) EXPECT_FALSE(process_alive(pid)) << pid;
  const auto info = w->session()->trialInfo(r.id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, protocol::TrialStatus::Failed);
}

// A worker refusing its config (exit code for a configuration error) fails the trial with the
// worker's own words.
TEST(RealWorker, AWorkerRefusingItsConfigIsReported) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  config::TrialConfig c = small_config(1, 3);
  c.data = config::DataSource::File;
  c.data_path = "/nonexistent/tokens.bin";
  w->form()->setConfig(c);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  if (!w->runTrial()) GTEST_SKIP() << "the form refuses this config before launch (also fine)";
  TB_WAIT_FOR(finished.size() == 1, kRealWorkerTimeoutMs);
  const TrialRecord& r = w->trialsModel()->record(0);
  EXPECT_EQ(r.status, protocol::TrialStatus::Failed);
  EXPECT_FALSE(r.reason.isEmpty());
}

// Issue 11 item 2: Trial > Measure the link… runs the worker's link probe on the form's 2 CPU
// ranks (Gloo) through the window's launch path, stores it in the session as a trial with its
// probe points, and the Prediction dock's link comes from it.
TEST(RealWorker, MeasuringTheLinkStoresAProbeThatThePredictionsUse) {
  REQUIRE_REAL_WORKER();
  auto w = make_real_window(worker);
  config::TrialConfig c = small_config(2, 10);
  c.device = config::Device::Cpu;
  w->form()->setConfig(c);
  PredictionPanel* panel = w->prediction()->panel();
  EXPECT_FALSE(panel->linkText().contains("link probe")) << panel->linkText().toStdString();  // nothing measured yet

  w->action(QStringLiteral("actionMeasureLink"))->trigger();
  LinkProbeDialog* d = w->linkProbe()->dialog();
  ASSERT_NE(d, nullptr);
  d->minMb()->setValue(1);
  d->maxMb()->setValue(2);  // 1 and 2 MiB: seconds on two shared cores
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  QSignalSpy progress(w->queue()->runner(), &LiveSource::progress);
  d->measureButton()->click();
  TB_WAIT_FOR(d->state() == LinkProbeDialog::State::Running, kRealWorkerTimeoutMs);
  EXPECT_EQ(d->cancelButton()->text(), "Cancel");
  TB_WAIT_FOR(finished.size() == 1, kRealWorkerTimeoutMs);
  ASSERT_EQ(d->state(), LinkProbeDialog::State::Stored) << d->statusText().toStdString();
  EXPECT_TRUE(d->statusText().contains("link probe, 2 x cpu")) << d->statusText().toStdString();
  EXPECT_EQ(d->points()->rowCount(), 2);  // rank 0's two sizes, as they arrived
  // Progress counted sizes, not steps.
  ASSERT_FALSE(progress.isEmpty());
  const auto last = progress.last().at(0).value<TrialProgress>();
  EXPECT_EQ(last.unit, "size");
  EXPECT_EQ(last.steps, 2);
  EXPECT_EQ(last.step, 2);

  // The session has the probe as a trial, named as the CLI names it, with its points.
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  const TrialRecord& r = w->trialsModel()->record(0);
  EXPECT_EQ(r.status, protocol::TrialStatus::Done) << r.reason.toStdString();
  EXPECT_EQ(r.config.name, "link probe, 2 x cpu");
  const auto loaded = w->session()->loadTrial(r.id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->info.name, "link probe, 2 x cpu");
  EXPECT_EQ(loaded->info.status, protocol::TrialStatus::Done);
  EXPECT_EQ(loaded->info.source, "link probe");
  ASSERT_EQ(loaded->log.ranks.size(), 2u);
  for (const auto& [rank, log] : loaded->log.ranks) {
    EXPECT_EQ(log.probes.size(), 2u) << "rank " << rank;
    for (const auto& p : log.probes) EXPECT_GT(p.busbw_gbps, 0) << "rank " << rank;
  }

  // The Prediction dock: the form's 2 CPU ranks now have a link, the probe's.
  TB_WAIT_FOR(w->prediction()->loading() == 0 && panel->linkText().contains("link probe, 2 x cpu"), kRealWorkerTimeoutMs);
  EXPECT_TRUE(panel->linkText().contains("measured by a link probe")) << panel->linkText().toStdString();
  EXPECT_TRUE(panel->findChild<QLabel*>("predictedLink")->isVisibleTo(w.get()));
  ASSERT_TRUE(panel->prediction().link.has_value());
  EXPECT_TRUE(panel->prediction().link->measured());
  EXPECT_EQ(panel->prediction().link->points.size(), 2u);
}
