// "Find the fastest…" offscreen: the dialog drives the search through its launch hook (planted
// stored trials standing in for the TrialLauncher), shows the ranked trials, the best point with
// its command line and limiter, and saves the best config; a cancelled search resumes.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QDoubleSpinBox>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <QPushButton>
#include <QSignalSpy>

#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "tests/core/investigate/planted_trials.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/autotune_dialog.h"

namespace ti = tunebench::investigate;
namespace ts = tunebench::store;
namespace tt = tunebench::testing;
using tunebench::ui::AutotuneDialog;
using tunebench::ui::BackgroundJobs;

namespace {

struct AutotuneFixture {
  AutotuneFixture() {
    dir = std::filesystem::temp_directory_path() / ("tb-ui-autotune-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = (dir / "s.tbsession").string();
    ts::SessionStore::create(path, "ui");
    tt::PlantedModel m;
    m.data_wait_ms_no_workers = 43;
    executor = tt::planted_executor(path, m, 21, &runs);
    base.name = "base";
    base.device = tunebench::config::Device::Cuda;
    base.amp = tunebench::config::Amp::Bf16;
  }
  ~AutotuneFixture() { std::filesystem::remove_all(dir); }
  bool step(AutotuneDialog& d, tunebench::protocol::TrialStatus status = tunebench::protocol::TrialStatus::Done) {
    if (!pending) return false;
    auto r = *pending;
    pending.reset();
    const auto out = executor(r);
    if (status != out.status) ts::SessionStore::open(path).set_trial_status(out.trial_id, status);
    stored[queuedId] = out.trial_id;
    tunebench::ui::TrialOutcome outcome;
    outcome.trial_id = queuedId;
    outcome.status = status;
    d.trialEnded(outcome);
    settle(d);
    return true;
  }
  // The dialog's session reads and writes are background jobs: their answers are waited for.
  void settle(AutotuneDialog& d) {
    EXPECT_TRUE(jobs.waitForIdle(120000));
    EXPECT_FALSE(d.isBusy());
  }
  BackgroundJobs jobs;
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
  tunebench::config::TrialConfig base;
  int runs = 0;
  ti::TrialExecutor executor;
  std::optional<ti::TrialRequest> pending;
};

}  // namespace

TEST(AutotuneDialog, SearchesShowsTheBestAndSavesIt) {
  AutotuneFixture f;
  AutotuneDialog d(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  d.setBudgetMinutes(0);
  d.setSteps(5, 12);
  ASSERT_TRUE(d.start());
  f.settle(d);
  ASSERT_TRUE(f.pending.has_value()) << d.errorText().toStdString();
  int guard = 0;
  while (f.step(d) && ++guard < 200) {
  }
  EXPECT_FALSE(d.isRunning());
  EXPECT_NE(d.reportText().indexOf(QStringLiteral("best: ")), -1) << d.reportText().toStdString();
  EXPECT_NE(d.reportText().indexOf(QStringLiteral("run it: tunebench-worker")), -1);
  if (const char* shots = std::getenv("TUNEBENCH_SCREENSHOT_DIR"))  // a picture for the docs
    d.grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/autotune-dialog.png"));
  const auto best = f.dir / "best.json";
  ASSERT_TRUE(d.saveBest(QString::fromStdString(best.string())));
  nlohmann::json j;
  std::ifstream(best) >> j;
  EXPECT_GT(j.at("num_workers").get<int>(), 0);  // the planted data cause is fixed
  auto s = ts::SessionStore::open(f.path);
  EXPECT_EQ(ts::find_plan(s, d.planId())->state, ts::PlanState::Done);
}

// Issue 44: Cancel let the running trial finish, then said "no configuration ran successfully"
// although two trials had. Cancel stops the trial; the report counts what ran and names the best so
// far; Start resumes the same search.
TEST(AutotuneDialog, CancelStopsTheTrialNamesTheBestSoFarAndStartResumes) {
  AutotuneFixture f;
  AutotuneDialog d(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  d.setBudgetMinutes(0);
  d.setSteps(5, 12);
  ASSERT_TRUE(d.start());
  f.settle(d);
  f.step(d);
  f.step(d);
  d.cancel();
  EXPECT_EQ(f.stopAsked, QStringList{f.queuedId});
  f.step(d, tunebench::protocol::TrialStatus::Stopped);
  EXPECT_FALSE(d.isRunning());
  EXPECT_FALSE(f.pending.has_value());
  EXPECT_EQ(d.reportText().indexOf(QStringLiteral("no configuration ran successfully")), -1) << d.reportText().toStdString();
  EXPECT_NE(d.reportText().indexOf(QStringLiteral("best so far: ")), -1) << d.reportText().toStdString();
  EXPECT_NE(d.reportText().indexOf(QStringLiteral("search: 2 trials")), -1) << d.reportText().toStdString();
  const qint64 plan = d.planId();
  {
    auto s = ts::SessionStore::open(f.path);
    EXPECT_EQ(ts::find_plan(s, plan)->state, ts::PlanState::Paused);
  }
  ASSERT_TRUE(d.start());
  f.settle(d);
  EXPECT_EQ(d.planId(), plan);
  int guard = 0;
  while (f.step(d) && ++guard < 200) {
  }
  auto s = ts::SessionStore::open(f.path);
  const auto report = ti::tune_report(s, plan);
  EXPECT_FALSE(report.result.pending.has_value());
  EXPECT_EQ(static_cast<int>(report.result.evaluations.size()), f.runs - 1);  // nothing ran twice; the stopped one again
}

TEST(AutotuneDialog, OpeningTheSearchRunsOffTheGuiThreadAndAFailureIsAMessage) {
  AutotuneFixture f;
  {
    AutotuneDialog d(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
    ASSERT_TRUE(d.start());
    EXPECT_TRUE(d.isBusy());  // open_tune scores the space in a job, not in the click's slot
    EXPECT_FALSE(d.isRunning());
    EXPECT_FALSE(d.start());  // one start at a time
    f.settle(d);
    EXPECT_TRUE(d.isRunning());
    EXPECT_TRUE(f.pending.has_value());
  }
  AutotuneDialog broken(f.base, QString::fromStdString((f.dir / "missing.tbsession").string()), f.hooks(), &f.jobs);
  QSignalSpy failed(&broken, &AutotuneDialog::failed);
  ASSERT_TRUE(broken.start());
  f.settle(broken);
  ASSERT_EQ(failed.size(), 1);
  EXPECT_FALSE(broken.errorText().isEmpty());
  EXPECT_FALSE(broken.isRunning());
  EXPECT_TRUE(broken.startButton()->isEnabled());  // it can be tried again
  broken.trialEnded({});                           // slots after a failure do nothing and throw nothing
  broken.cancel();
  f.settle(broken);
  EXPECT_EQ(failed.size(), 1);
}

// Issue 44: the search's plan is visible before Start (its axes, grid, steps and budget).
TEST(AutotuneDialog, ThePlanIsShownBeforeStart) {
  AutotuneFixture f;
  AutotuneDialog d(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  const QString before = d.reportText();
  EXPECT_TRUE(before.startsWith(QStringLiteral("Before Start"))) << before.toStdString();
  for (const auto& axis : d.spec().space.axes)
    EXPECT_TRUE(before.contains(QString::fromStdString(axis.name) + QStringLiteral(": "))) << axis.name;
  EXPECT_TRUE(before.contains(QStringLiteral("%1 points in the grid").arg(d.spec().space.grid_size())))
      << before.toStdString();
  EXPECT_TRUE(before.contains(QStringLiteral("At most 10 minutes"))) << before.toStdString();
  EXPECT_FALSE(f.pending.has_value());  // nothing runs before Start
}

// The objective names what the trials run on: "per CPU rank" for a CPU base, "per GPU" on GPUs.
TEST(AutotuneDialog, TheObjectiveIsPerCpuRankOnTheCpu) {
  AutotuneFixture f;
  AutotuneDialog gpu(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  auto* on_gpu = gpu.findChild<QCheckBox*>();
  ASSERT_TRUE(on_gpu);
  EXPECT_EQ(on_gpu->text(), QStringLiteral("tokens/s per GPU (else in total)"));
  tunebench::config::TrialConfig cpu = f.base;
  cpu.device = tunebench::config::Device::Cpu;
  cpu.amp = tunebench::config::Amp::Fp32;
  AutotuneDialog d(cpu, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  auto* box = d.findChild<QCheckBox*>();
  ASSERT_TRUE(box);
  EXPECT_EQ(box->text(), QStringLiteral("tokens/s per CPU rank (else in total)"));
}

// Issue 41: the second objective from the window: of the finalists within a margin of the
// fastest, the most tokens per joule; the plan says so; a CPU search has no energy to pick by.
TEST(AutotuneDialog, TheCheapestInEnergyWithinAMarginIsASecondObjectiveOnGpus) {
  AutotuneFixture f;
  AutotuneDialog d(f.base, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  auto* box = d.findChild<QDoubleSpinBox*>(QStringLiteral("cheapestWithin"));
  ASSERT_TRUE(box);
  EXPECT_TRUE(box->isEnabled());
  EXPECT_DOUBLE_EQ(d.spec().options.cheapest_within, 0.0);
  EXPECT_FALSE(d.reportText().contains(QStringLiteral("tokens per joule")));
  d.setCheapestWithin(5);
  EXPECT_DOUBLE_EQ(d.spec().options.cheapest_within, 0.05);
  EXPECT_TRUE(d.reportText().contains(QStringLiteral("the most tokens per joule within 5 % of the fastest")))
      << d.reportText().toStdString();
  tunebench::config::TrialConfig cpu = f.base;
  cpu.device = tunebench::config::Device::Cpu;
  cpu.amp = tunebench::config::Amp::Fp32;
  AutotuneDialog c(cpu, QString::fromStdString(f.path), f.hooks(), &f.jobs);
  auto* cpuBox = c.findChild<QDoubleSpinBox*>(QStringLiteral("cheapestWithin"));
  ASSERT_TRUE(cpuBox);
  EXPECT_FALSE(cpuBox->isEnabled());
  c.setCheapestWithin(5);
  EXPECT_DOUBLE_EQ(c.spec().options.cheapest_within, 0.0);
}
