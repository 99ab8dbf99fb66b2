// The parts MainWindow wires, each on its own: the live trials' books (LiveTrialTracker), the
// trials table and its grouping (TrialsPanel), the docks' shares (DockLayout), the status bar's
// job and run lines (JobStatus, RunStatus), the window's actions and menus (WorkbenchActions),
// and the controllers' narrow context (no controller needs the window).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QItemSelectionModel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTextEdit>

#include "tests/ui/wait_for.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/runner/replay_source.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/dock_layout.h"
#include "ui/windows/job_status.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/run_status.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_groups_view.h"
#include "ui/windows/trials_panel.h"
#include "ui/windows/workbench_actions.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
EventBatch steps_of(const QString& trial, int rank, int first, int n, int64_t step_us = 10000) {
  EventBatch batch;
  for (int i = first; i < first + n; ++i) {
    protocol::Step s;
    s.step = i;
    s.start_us = int64_t(i) * step_us;
    s.end_us = s.start_us + step_us;
    s.step_ms = double(step_us) / 1000.0;
    s.tokens = 1000;
    batch.push_back({{1, trial.toStdString(), rank, s.end_us}, s});
  }
  return batch;
}

// A session, a queue and the books over them, as the window has them.
struct Books {
  Books() {
    EXPECT_TRUE(session.newScratchSession()) << session.errorString().toStdString();
  }
  TrialsModel trials;
  BackgroundJobs jobs;
  SessionController session{&trials, &jobs};
  TrialQueue queue;
  LiveTrialTracker tracker{&trials, &session, &queue};
};

config::TrialConfig cpu_trial(int steps) {
  config::TrialConfig c;
  c.device = config::Device::Cpu;
  c.model = "tiny";
  c.steps = steps;
  c.warmup = 1;
  return c;
}

}  // namespace

// ---- LiveTrialTracker ----

TEST(LiveTrialTracker, AQueuedTrialHasARowAndASessionRowThenFollowsItsRun) {
  Books b;
  const QString id = b.tracker.enqueue(cpu_trial(500), QStringLiteral("live"), std::nullopt,
                                       QStringLiteral(TUNEBENCH_FAKE_WORKER));
  b.queue.clearPending();  // the books are what is tested here, not the run
  ASSERT_EQ(b.trials.rowCount(), 1);
  const TrialRecord* r = b.trials.find(id);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, protocol::TrialStatus::Queued);
  EXPECT_EQ(r->steps, 500);
  EXPECT_EQ(r->config.name, id.toStdString()) << "an unnamed trial goes by its id";
  EXPECT_GE(b.session.storeId(id), 0);

  EXPECT_EQ(b.tracker.start(id), id);
  EXPECT_EQ(b.tracker.current(), id);
  EXPECT_EQ(b.trials.find(id)->status, protocol::TrialStatus::Running);
  b.tracker.addEvents(steps_of(id, 0, 0, 6));
  b.tracker.setProgress({id, 6, 500, 0.6, 0});
  EXPECT_EQ(b.trials.find(id)->step, 6);
  EXPECT_NEAR(b.trials.find(id)->step_ms_median, 10.0, 1e-9);
  // The running trial's events stay, whatever else fills the cache.
  for (int t = 0; t < 40; ++t) b.tracker.logs().add(QStringLiteral("other%1").arg(t), steps_of(QString(), 0, 0, 40000));
  EXPECT_TRUE(b.tracker.logs().contains(id));
}

TEST(LiveTrialTracker, AReplayIsAnnouncedAtOnceARecordedTrialOnlyOnceStored) {
  Books b;
  QSignalSpy finished(&b.tracker, &LiveTrialTracker::trialFinished);
  ReplaySource replay;
  EventBatch events = steps_of(QStringLiteral("r1"), 0, 0, 3);
  protocol::Hello hello;
  hello.world_size = 1;
  config::TrialConfig recorded = cpu_trial(3);
  recorded.num_workers = 3;
  hello.config = config::to_json(recorded);
  events.insert(events.begin(), {{1, "r1", 0, 1}, hello});
  replay.setEvents(events, QStringLiteral("r1"));
  const QString id = b.tracker.addReplay(&replay, QStringLiteral("run.jsonl"));
  EXPECT_EQ(b.trials.find(id)->config.name, "run.jsonl");
  EXPECT_TRUE(b.trials.find(id)->replay);
  b.tracker.start(id);
  b.tracker.addEvents(events);
  EXPECT_EQ(b.trials.find(id)->config.num_workers, 3) << "a replay learns its config from the log's hello";
  EXPECT_EQ(b.trials.find(id)->config.name, "run.jsonl") << "and keeps its name";
  b.tracker.finish({id, protocol::TrialStatus::Done, 0, {}, {}, -1}, false);
  ASSERT_EQ(finished.size(), 1);
  EXPECT_EQ(b.trials.find(id)->status, protocol::TrialStatus::Done);
  EXPECT_TRUE(b.tracker.logs().contains(id)) << "a replay is in no file: its events stay at hand";

  // A recorded trial ends in the file first: the announcement waits for SessionController.
  const QString live = b.tracker.enqueue(cpu_trial(5), QStringLiteral("live"), std::nullopt,
                                         QStringLiteral(TUNEBENCH_FAKE_WORKER));
  b.queue.clearPending();
  b.tracker.start(live);
  b.tracker.addEvents(steps_of(live, 0, 0, 2));
  b.tracker.finish({live, protocol::TrialStatus::Failed, 3, QStringLiteral("rank 0 ran out of memory"), {}, 0}, true);
  EXPECT_EQ(finished.size(), 1);
  EXPECT_EQ(b.trials.find(live)->status, protocol::TrialStatus::Failed);
  EXPECT_EQ(b.trials.find(live)->reason, QStringLiteral("rank 0 ran out of memory"));
  emit b.session.liveTrialStored({live, protocol::TrialStatus::Failed, 3, {}, {}, 0});
  ASSERT_EQ(finished.size(), 2);
  EXPECT_FALSE(b.tracker.logs().contains(live)) << "stored trials load from the file, not the cache";
}

TEST(LiveTrialTracker, CancelDropsAQueuedTrialStopsTheRunningOneAndKnowsNoOther) {
  Books b;
  const QString worker = QStringLiteral(TUNEBENCH_FAKE_WORKER);
  const QString first = b.tracker.enqueue(cpu_trial(100000), QStringLiteral("live"), std::nullopt, worker);
  const QString second = b.tracker.enqueue(cpu_trial(3), QStringLiteral("live"), std::nullopt, worker);
  TB_WAIT_FOR(b.queue.runner()->isActive() && b.queue.runner()->trialId() == first, kTimeoutMs);
  EXPECT_TRUE(b.tracker.isBusy());
  EXPECT_FALSE(b.tracker.cancel(QStringLiteral("no such trial")));
  ASSERT_TRUE(b.tracker.cancel(second));
  EXPECT_EQ(b.trials.find(second)->status, protocol::TrialStatus::Stopped);
  EXPECT_EQ(b.trials.find(second)->reason, QStringLiteral("removed from the queue"));
  EXPECT_EQ(b.session.trialInfo(second)->status, store::TrialStatus::Stopped);
  ASSERT_TRUE(b.tracker.cancel(first));
  TB_WAIT_FOR(!b.tracker.isBusy(), kTimeoutMs);
  EXPECT_TRUE(b.queue.isIdle());
}

// ---- TrialsPanel ----

TEST(TrialsPanel, MakeCurrentKeepsASelectionOfSeveralRows) {
  TrialsModel model;
  for (const char* id : {"a", "b", "c"}) {
    TrialRecord r;
    r.id = QString::fromLatin1(id);
    model.upsert(r);
  }
  TrialsPanel panel(&model);
  EXPECT_TRUE(panel.makeCurrent(QStringLiteral("b")));
  EXPECT_EQ(panel.selection()->currentIndex().row(), 1);
  EXPECT_FALSE(panel.makeCurrent(QStringLiteral("nope")));
  EXPECT_EQ(panel.selectRows({QStringLiteral("0"), QStringLiteral(" 2"), QStringLiteral("x"), QStringLiteral("9")}),
            QStringLiteral("c"));
  EXPECT_EQ(panel.selectedCount(), 2);
  EXPECT_FALSE(panel.makeCurrent(QStringLiteral("b"))) << "a comparison's rows must not be taken away";
  EXPECT_EQ(panel.selectedCount(), 2);
  EXPECT_EQ(panel.selectRows({QStringLiteral("7")}), QString());
}

TEST(TrialsPanel, GroupingShowsTheTreeAndClicksAskForTheTrial) {
  TrialsModel model;
  TrialRecord r;
  r.id = QStringLiteral("a");
  model.upsert(r);
  TrialsPanel panel(&model);
  panel.show();
  QSignalSpy activated(&panel, &TrialsPanel::trialActivated);
  EXPECT_TRUE(panel.table()->isVisibleTo(&panel));
  panel.groupBy()->setCurrentIndex(panel.groupBy()->findData(QStringLiteral("strategy")));
  EXPECT_TRUE(panel.groupsView()->isVisibleTo(&panel));
  EXPECT_FALSE(panel.table()->isVisibleTo(&panel));
  emit panel.groupsView()->trialActivated(QStringLiteral("a"));
  ASSERT_EQ(activated.size(), 1);
  EXPECT_EQ(activated.at(0).at(0).toString(), QStringLiteral("a"));
}

// ---- DockLayout ----

TEST(DockLayout, TheDocksGrowBackToTheirShare) {
  QMainWindow window;
  window.setCentralWidget(new QTextEdit);
  DockLayout docks(&window);
  QDockWidget* form = docks.addForm(new QTextEdit);
  docks.addBottom(new QTextEdit, new QTextEdit);
  QDockWidget* extra = docks.addBelowForm(QStringLiteral("Extra"), QStringLiteral("extraDock"), new QTextEdit);
  EXPECT_EQ(window.findChild<QDockWidget*>(QStringLiteral("extraDock")), extra);
  EXPECT_EQ(window.dockWidgetArea(extra), Qt::LeftDockWidgetArea);
  EXPECT_EQ(docks.toggleActions().size(), 4);
  auto* trials = window.findChild<QDockWidget*>(QStringLiteral("trialsDock"));
  window.resize(800, 500);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  window.resize(1600, 1000);
  TB_EXPECT_WAIT_FOR(window.height() == 1000 && trials->height() >= 1000 * 0.18, kTimeoutMs)
      << "the trials dock stayed at " << trials->height();
  EXPECT_GE(form->width(), 340);
}

// ---- JobStatus and RunStatus ----

TEST(JobStatus, ShowsTheRunningJobAndHidesWhenIdle) {
  BackgroundJobs jobs;
  QWidget bar;
  auto* status = new JobStatus(&jobs, &bar);
  bar.show();
  std::atomic<bool> release{false};
  jobs.submit(QStringLiteral("Opening big.tbsession"), [&](JobProgress& p) {
    p.report(1, 4, QStringLiteral("reading trial 1 of 4"));
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return BackgroundJobs::Apply();
  });
  TB_WAIT_FOR(status->isVisible() && status->text().contains(QStringLiteral("reading trial 1 of 4")), kTimeoutMs);
  EXPECT_TRUE(status->text().startsWith(QStringLiteral("Opening big.tbsession")));
  release = true;
  TB_WAIT_FOR(!jobs.isBusy() && !status->isVisible(), kTimeoutMs);
}

TEST(RunStatus, SaysWhatRunsHowFarAndHowItEnded) {
  RunStatus status;
  EXPECT_EQ(status.text(), QString()) << "nothing to say before a run";
  EXPECT_TRUE(status.isHidden());
  status.starting(QStringLiteral("tiny on CPU"));
  EXPECT_EQ(status.text(), QStringLiteral("running tiny on CPU"));
  EXPECT_FALSE(status.isHidden());
  EXPECT_FALSE(status.bar()->isHidden());
  status.setProgress({QStringLiteral("t1"), 3, 10, 1.5, 0});
  EXPECT_EQ(status.bar()->value(), 3);
  EXPECT_EQ(status.bar()->maximum(), 10);
  EXPECT_TRUE(status.text().startsWith(QStringLiteral("tiny on CPU: "))) << status.text().toStdString();
  // The trial is named by its name, never by its id.
  status.finished({QStringLiteral("t1"), protocol::TrialStatus::Failed, 1, QStringLiteral("rank 1 crashed"), {}, 1});
  EXPECT_EQ(status.text(), QStringLiteral("tiny on CPU failed: rank 1 crashed"));
  EXPECT_TRUE(status.bar()->isHidden());
  status.starting(QStringLiteral("ddp x2"));
  status.finished({QStringLiteral("t2"), protocol::TrialStatus::Stopped, 130, {}, {}, -1});
  EXPECT_EQ(status.text(), QStringLiteral("ddp x2 stopped"));
  status.clear();
  EXPECT_EQ(status.text(), QString());
  EXPECT_TRUE(status.isHidden());
}

// ---- WorkbenchActions and the window's menus ----

TEST(WorkbenchActions, EveryControllersEntryIsInTheMenus) {
  auto w = test::make_window();
  auto titles = [](QMenu* menu) {
    QStringList out;
    for (QAction* a : menu->actions()) out << a->objectName();
    return out;
  };
  QMenu* analysis = w->menu(QStringLiteral("menuAnalysis"));
  ASSERT_NE(analysis, nullptr);
  EXPECT_TRUE(titles(analysis).contains(QStringLiteral("actionCompare")));
  EXPECT_TRUE(titles(analysis).contains(QStringLiteral("actionWhatIf"))) << "the prediction's What if…";
  QMenu* trial = w->menu(QStringLiteral("menuTrial"));
  ASSERT_NE(trial, nullptr);
  const QStringList entries = titles(trial);
  EXPECT_EQ(entries.indexOf(QStringLiteral("actionMeasureLink")), entries.indexOf(QStringLiteral("actionValidate")) + 1);
  // Analysis sits before Help on the menu bar.
  QStringList bar;
  for (QAction* a : w->menuBar()->actions()) bar << (a->menu() ? a->menu()->objectName() : QString());
  EXPECT_LT(bar.indexOf(QStringLiteral("menuAnalysis")), bar.indexOf(QStringLiteral("menuHelp")));
  EXPECT_LT(entries.indexOf(QStringLiteral("actionRenameTrial")), entries.indexOf(QStringLiteral("actionTrialSettings")));
  // The trials table's context menu: the trial's entries with Settings…, then Investigate….
  const QStringList context = titles(w->sessionActions()->contextMenu());
  ASSERT_TRUE(context.contains(QStringLiteral("actionTrialSettings")));
  EXPECT_LT(context.indexOf(QStringLiteral("actionTrialSettings")), context.indexOf(QString()))
      << "before the first separator, beside the trial's own entries";
  EXPECT_EQ(context.last(), QStringLiteral("actionInvestigate"));
  // Run, Stop and Replay follow whether a trial runs.
  EXPECT_TRUE(w->action(QStringLiteral("actionRun"))->isEnabled());
  EXPECT_FALSE(w->action(QStringLiteral("actionStop"))->isEnabled());
}
