// The plan view of "Investigate…" offscreen: planned and skipped variants, progress, the ranked
// effect chart and the verdict, Cancel, and reopening resumes the plan. Trials are "run" by the
// planted executor of tests/core/investigate (stored synthetic trials), handed over the way the
// main window's hooks would: queued now, ended and stored later (trialEnded).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <QLabel>
#include <QSignalSpy>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>

#include "core/investigate/plan_tags.h"
#include "core/store/event_log_import.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "tests/core/investigate/planted_trials.h"
#include "tests/ui/wait_for.h"
#include "ui/plots/effect_chart.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/investigate_window.h"

namespace ti = tunebench::investigate;
namespace ts = tunebench::store;
namespace tt = tunebench::testing;
using tunebench::ui::BackgroundJobs;
using tunebench::ui::InvestigateWindow;

namespace {

struct Fixture {
  Fixture() {
    dir = std::filesystem::temp_directory_path() / ("tb-ui-investigate-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = (dir / "s.tbsession").string();
    ts::SessionStore::create(path, "ui");
    model.data_wait_ms_no_workers = 43;
    tunebench::config::TrialConfig c;
    c.name = "forum baseline";
    c.device = tunebench::config::Device::Cuda;
    c.amp = tunebench::config::Amp::Bf16;
    c.steps = 14;
    c.warmup = 2;
    std::mt19937_64 rng(5);
    auto s = ts::SessionStore::open(path);
    trial = ts::import_trial_log(s, tt::planted_trial(c, model, rng, "user"), c.name, "test").trial_id;
    executor = tt::planted_executor(path, model, 77, &runs);
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  // Runs the queued request (if any) and reports it stored, as the launcher and recorder do; the
  // window's session reads and writes are background jobs: their answers are waited for.
  bool step(InvestigateWindow& w, tunebench::protocol::TrialStatus status = tunebench::protocol::TrialStatus::Done) {
    if (!pending) return false;
    auto r = *pending;
    pending.reset();
    const auto out = executor(r);
    if (status != out.status) ts::SessionStore::open(path).set_trial_status(out.trial_id, status);
    stored[queuedId] = out.trial_id;
    tunebench::ui::TrialOutcome outcome;
    outcome.trial_id = queuedId;
    outcome.status = status;
    w.trialEnded(outcome);
    settle(w);
    return true;
  }
  void settle(InvestigateWindow& w) {
    EXPECT_TRUE(jobs.waitForIdle(60000));
    EXPECT_FALSE(w.isBusy());
  }
  BackgroundJobs jobs;
  // The main window's hooks, by hand: a request is queued at once under a new record id; Stop
  // asks for it to end stopped (the next step() stores it so).
  tunebench::ui::PlanRun::Hooks hooks() {
    tunebench::ui::PlanRun::Hooks h;
    h.launch = [this](const ti::TrialRequest& r, auto queued, auto, auto) {
      pending = r;
      queuedId = QStringLiteral("r%1").arg(++queuedCount);
      queued(queuedId);
    };
    h.stop = [this](const QString& id) { stopAsked << id; };
    h.storeId = [this](const QString& id) { return stored.count(id) ? stored.at(id) : qint64(-1); };
    return h;
  }
  QString queuedId;
  int queuedCount = 0;
  QStringList stopAsked;
  std::map<QString, qint64> stored;
  std::filesystem::path dir;
  std::string path;
  tt::PlantedModel model;
  int64_t trial = 0;
  int runs = 0;
  ti::TrialExecutor executor;
  std::optional<ti::TrialRequest> pending;
};

}  // namespace

TEST(InvestigateWindow, ShowsThePlanProgressRankedEffectsAndVerdict) {
  Fixture f;
  InvestigateWindow w(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
  w.show();
  ASSERT_TRUE(w.start());
  f.settle(w);
  ASSERT_TRUE(f.pending.has_value()) << w.errorText().toStdString();
  EXPECT_GT(w.variantsTable()->rowCount(), 2);
  EXPECT_NE(w.variantsTable()->item(0, 1)->text().indexOf(QStringLiteral("num_workers")), -1);
  EXPECT_FALSE(w.skippedList()->findItems(QStringLiteral("single rank"), Qt::MatchContains).isEmpty());
  int guard = 0;
  while (f.step(w) && ++guard < 40) {
  }
  EXPECT_FALSE(w.isRunning());
  EXPECT_EQ(w.progressBar()->value(), w.progressBar()->maximum());
  EXPECT_EQ(w.chart()->barCount(), w.variantsTable()->rowCount());
  EXPECT_GE(w.chart()->beyondNoiseCount(), 1);
  EXPECT_NE(w.verdictLabel()->text().indexOf(QStringLiteral("What fixes it: num_workers")), -1)
      << w.verdictLabel()->text().toStdString();
  EXPECT_FALSE(w.cancelButton()->isEnabled());
  const auto png = f.dir / "effects.png";
  ASSERT_TRUE(w.chart()->savePng(QString::fromStdString(png.string()), 800, 400));
  EXPECT_GT(std::filesystem::file_size(png), 2000u);
  // TUNEBENCH_SCREENSHOT_DIR=dir keeps a picture of the whole window (docs).
  if (const char* shots = std::getenv("TUNEBENCH_SCREENSHOT_DIR")) {
    w.chart()->replotIfDirty();
    w.grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/investigate-window.png"));
  }
  auto s = ts::SessionStore::open(f.path);
  EXPECT_EQ(ts::find_plan(s, w.planId())->state, ts::PlanState::Done);
}

TEST(InvestigateWindow, CancelStopsThePlansTrialAndReopeningResumesThePlan) {
  Fixture f;
  qint64 plan = 0;
  {
    InvestigateWindow w(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
    ASSERT_TRUE(w.start());
    f.settle(w);
    f.step(w);
    f.step(w);  // two trials stored, the third running
    w.cancel();
    EXPECT_EQ(f.stopAsked, QStringList{f.queuedId});  // Cancel stops the running trial
    f.step(w, tunebench::protocol::TrialStatus::Stopped);
    EXPECT_FALSE(w.isRunning());
    EXPECT_FALSE(w.cancelButton()->isEnabled());
    EXPECT_TRUE(w.startButton()->isEnabled());
    EXPECT_TRUE(w.statusLabel()->text().startsWith(QStringLiteral("Cancelled"))) << w.statusLabel()->text().toStdString();
    EXPECT_FALSE(f.pending.has_value());  // nothing new is queued
    plan = w.planId();
    auto s = ts::SessionStore::open(f.path);
    EXPECT_EQ(ts::find_plan(s, plan)->state, ts::PlanState::Paused);
  }
  EXPECT_EQ(f.runs, 3);
  InvestigateWindow again(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
  ASSERT_TRUE(again.start());
  f.settle(again);
  EXPECT_EQ(again.planId(), plan);
  EXPECT_EQ(again.progressBar()->value(), 2);  // the stopped trial does not count
  int guard = 0;
  while (f.step(again) && ++guard < 40) {
  }
  auto s = ts::SessionStore::open(f.path);
  int stored = 0;
  for (const auto& [arm, list] : ti::finished_arms(s.list_trials(), plan)) stored += int(list.size());
  EXPECT_EQ(stored, f.runs - 1);  // every run but the stopped one counted, none repeated beyond the schedule
  EXPECT_EQ(ti::finished_arms(s.list_trials(), plan).at(ti::kBaselineArm).size(), 2u);
}

// The Stop of the window's run control on a plan trial (issue 42): the plan pauses at once and
// says so, instead of waiting for a trial that will never be counted; Resume continues it.
TEST(InvestigateWindow, AStopOnThePlansTrialPausesThePlanAndResumeContinues) {
  Fixture f;
  InvestigateWindow w(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
  ASSERT_TRUE(w.start());
  f.settle(w);
  f.step(w);
  f.step(w, tunebench::protocol::TrialStatus::Stopped);  // the user pressed Stop
  EXPECT_FALSE(w.isRunning());
  EXPECT_FALSE(f.pending.has_value());
  EXPECT_NE(w.statusLabel()->text().indexOf(QStringLiteral("was stopped. The plan is paused")), -1)
      << w.statusLabel()->text().toStdString();
  EXPECT_EQ(w.startButton()->text(), QStringLiteral("Resume"));
  EXPECT_TRUE(w.startButton()->isEnabled());
  {
    auto s = ts::SessionStore::open(f.path);
    EXPECT_EQ(ts::find_plan(s, w.planId())->state, ts::PlanState::Paused);
  }
  ASSERT_TRUE(w.start());  // Resume
  f.settle(w);
  ASSERT_TRUE(f.pending.has_value());
  EXPECT_TRUE(w.isRunning());
  EXPECT_EQ(w.progressBar()->value(), 1);
}

TEST(InvestigateWindow, ASessionThatCannotBeReadIsAMessageNotAnException) {
  Fixture f;
  InvestigateWindow w(QString::fromStdString((f.dir / "missing.tbsession").string()), f.trial, f.hooks(), &f.jobs);
  QSignalSpy failed(&w, &InvestigateWindow::failed);
  ASSERT_TRUE(w.start());  // the reads run in the background: start() itself never throws
  f.settle(w);
  ASSERT_EQ(failed.size(), 1);
  EXPECT_FALSE(w.errorText().isEmpty());
  EXPECT_EQ(w.statusLabel()->text(), w.errorText());
  EXPECT_FALSE(w.isRunning());
  EXPECT_FALSE(f.pending.has_value());
  w.trialEnded({});  // a slot called afterwards does nothing (and throws nothing)
  f.settle(w);
  EXPECT_EQ(failed.size(), 1);
}

TEST(InvestigateWindow, TheSessionIsReadOffTheGuiThread) {
  Fixture f;
  InvestigateWindow w(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
  QSignalSpy started(&f.jobs, &BackgroundJobs::jobStarted);
  ASSERT_TRUE(w.start());
  EXPECT_FALSE(f.pending.has_value());  // nothing was read on this thread yet
  EXPECT_TRUE(w.isBusy());
  f.settle(w);
  EXPECT_TRUE(f.pending.has_value());
  EXPECT_GE(started.size(), 1);
}

// Issue 44: the two budget boxes (both "no limit" at 0) have labels of their own.
TEST(InvestigateWindow, TheBudgetBoxesHaveLabels) {
  Fixture f;
  InvestigateWindow w(QString::fromStdString(f.path), f.trial, f.hooks(), &f.jobs);
  QStringList labelled;
  for (QLabel* label : w.findChildren<QLabel*>())
    if (label->buddy()) labelled << label->buddy()->objectName() + QStringLiteral("=") + label->text();
  EXPECT_TRUE(labelled.join(' ').contains(QStringLiteral("investigateBudget=&Trials at most"))) << labelled.join(' ').toStdString();
  EXPECT_TRUE(labelled.join(' ').contains(QStringLiteral("investigateMinutes=&Minutes of trial time at most")))
      << labelled.join(' ').toStdString();
}
