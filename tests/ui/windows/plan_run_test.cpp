// The window's plan adapter (PlanRun) against the plan fault table (tests/core/investigate/
// plan_faults.h), with the launcher's and the run control's parts played by hand as the main
// window's hooks play them: a request is queued under a record id, Stop ends the trial stopped,
// and its end comes back through trialEnded once it is stored. The same rows run against the
// command line's run_plan in tests/core/investigate/plan_run_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <QObject>

#include "tests/core/investigate/plan_faults.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/plan_run.h"
#include "ui/windows/plan_session.h"

namespace ti = tunebench::investigate;
namespace ts = tunebench::store;
using tunebench::protocol::TrialStatus;
using tunebench::test::PlanFault;
using tunebench::ui::PlanRun;

class WindowPlanFaults : public ::testing::TestWithParam<PlanFault> {};

namespace {

// Drives one PlanRun as the window would, injecting the row's faults into the k-th request.
struct WindowAdapter {
  WindowAdapter(const std::string& session, const PlanFault& f, tunebench::test::PlantedTrials& t)
      : row(f), trials(t), plans(&jobs, &owner, QString::fromStdString(session)) {
    PlanRun::Hooks hooks;
    hooks.launch = [this](const ti::TrialRequest& r, auto queued, auto, auto refused) {
      ++asked;
      if (asked == row.refused) return refused(QStringLiteral("refused for the test"));
      pending = r;
      queuedId = QStringLiteral("r%1").arg(asked);
      queued(queuedId);
    };
    hooks.stop = [this](const QString& id) { stopAsked = id; };
    hooks.storeId = [this](const QString& id) { return stored.count(id) ? stored.at(id) : qint64(-1); };
    run = new PlanRun(hooks, &plans, &owner);
  }
  // Runs the plan until it rests (nothing queued, no job left); returns its last status line.
  QString runToRest() {
    for (int guard = 0; guard < 500; ++guard) {
      EXPECT_TRUE(jobs.waitForIdle(60000));
      if (!pending) return run->status();
      const ti::TrialRequest r = *pending;
      pending.reset();
      const QString id = queuedId;
      if (asked == row.cancelled) {
        run->cancel();
        EXPECT_EQ(stopAsked, id) << "Cancel stops the plan's running trial";
      }
      const TrialStatus status = asked == row.stopped || asked == row.cancelled || stopAsked == id ? TrialStatus::Stopped
                                 : asked == row.failed ? TrialStatus::Failed
                                                       : TrialStatus::Done;
      stored[id] = trials.run(r, status).trial_id;
      tunebench::ui::TrialOutcome outcome;
      outcome.trial_id = id;
      outcome.status = status;
      run->trialEnded(outcome);
    }
    ADD_FAILURE() << "the plan never came to rest";
    return run->status();
  }

  const PlanFault& row;
  tunebench::test::PlantedTrials& trials;
  QObject owner;
  tunebench::ui::BackgroundJobs jobs;
  tunebench::ui::PlanJobs plans;
  PlanRun* run = nullptr;
  int asked = 0;
  std::optional<ti::TrialRequest> pending;
  QString queuedId, stopAsked;
  std::map<QString, qint64> stored;
};

}  // namespace

TEST_P(WindowPlanFaults, EndsAsTheTableSays) {
  const PlanFault& row = GetParam();
  const auto dir = std::filesystem::temp_directory_path() / ("tb-window-plan-" + row.name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    const auto session = tunebench::test::make_plan_fault_session(dir.string(), row);
    tunebench::test::PlantedTrials trials(session.path, 77);
    WindowAdapter window(session.path, row, trials);
    window.run->setPlan({session.plan, row.kind, {row.budget}});
    ASSERT_TRUE(window.run->start());
    const QString last = window.runToRest();

    EXPECT_FALSE(window.run->isActive());
    EXPECT_EQ(window.run->state(), row.state);
    EXPECT_EQ(tunebench::test::stored_state(session.path, session.plan), row.state);
    EXPECT_EQ(tunebench::test::finished_trials(session.path, session.plan), row.finished);
    EXPECT_EQ(trials.runs(), row.ran);
    EXPECT_TRUE(last.contains(QString::fromStdString(row.last_line))) << last.toStdString();
    if (row.best_so_far) {
      EXPECT_TRUE(tunebench::test::stored_result_names_a_best(session.path, session.plan));
    }
    if (row.resume_runs >= 0) {
      // Resume: only what is missing runs, and the plan ends done.
      const int before = trials.runs();
      window.asked = -1000;  // no more faults
      ASSERT_TRUE(window.run->start());
      window.runToRest();
      EXPECT_EQ(window.run->state(), ts::PlanState::Done);
      EXPECT_EQ(trials.runs() - before, row.resume_runs);
    }
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Table, WindowPlanFaults, ::testing::ValuesIn(tunebench::test::plan_faults()),
                         [](const auto& info) { return info.param.name; });
