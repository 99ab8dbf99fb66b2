// The command line's plan adapter (run_plan) against the plan fault table (plan_faults.h): the
// same rows run against the window's PlanRun in tests/ui/windows/plan_run_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "core/investigate/plan_run.h"
#include "tests/core/investigate/plan_faults.h"

namespace ti = tunebench::investigate;
namespace ts = tunebench::store;
using tunebench::test::PlanFault;
using tunebench::protocol::TrialStatus;

class PlanRunFaults : public ::testing::TestWithParam<PlanFault> {};

namespace {

struct Dir {
  std::filesystem::path path;
  explicit Dir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tb-plan-run-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_P(PlanRunFaults, EndsAsTheTableSays) {
  const PlanFault& row = GetParam();
  Dir dir(row.name);
  const auto session = tunebench::test::make_plan_fault_session(dir.path.string(), row);
  tunebench::test::PlantedTrials trials(session.path, 77);
  std::atomic<bool> cancel{false};
  int asked = 0;
  // Each trial as run_trial would end it: a refused one stores nothing, Ctrl-C stops it.
  const ti::TrialExecutor executor = [&](const ti::TrialRequest& r) {
    ++asked;
    if (asked == row.refused) {
      ti::TrialOutcome refused;
      refused.message = "refused for the test";
      return refused;
    }
    if (asked == row.cancelled) cancel = true;
    const TrialStatus status = asked == row.stopped || asked == row.cancelled ? TrialStatus::Stopped
                               : asked == row.failed                         ? TrialStatus::Failed
                                                                             : TrialStatus::Done;
    return trials.run(r, status);
  };
  std::vector<std::string> lines;
  const ti::PlanRef plan{session.plan, row.kind, {row.budget}};
  const auto end = ti::run_plan(session.path, plan, executor, [&](const std::string& l) { lines.push_back(l); }, &cancel);

  EXPECT_EQ(end, row.state);
  EXPECT_EQ(tunebench::test::stored_state(session.path, session.plan), row.state);
  EXPECT_EQ(tunebench::test::finished_trials(session.path, session.plan), row.finished);
  EXPECT_EQ(trials.runs(), row.ran);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find(row.last_line), std::string::npos) << lines.back();
  if (row.best_so_far) {
    EXPECT_TRUE(tunebench::test::stored_result_names_a_best(session.path, session.plan));
  }
  if (row.resume_runs < 0) return;

  // Resume: only what is missing runs, and the plan ends done.
  const int before = trials.runs();
  cancel = false;
  asked = -1000;  // no more faults
  EXPECT_EQ(ti::run_plan(session.path, plan, executor, {}, &cancel), ts::PlanState::Done);
  EXPECT_EQ(trials.runs() - before, row.resume_runs);
}

INSTANTIATE_TEST_SUITE_P(Table, PlanRunFaults, ::testing::ValuesIn(tunebench::test::plan_faults()),
                         [](const auto& info) { return info.param.name; });
