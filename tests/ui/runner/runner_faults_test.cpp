// The shared fault table (tests/core/launch/supervision_faults.h) against the GUI's TrialRunner
// (QProcess, offscreen): every fault ends with the row's status, exit code and words, exactly as
// the headless runner's test (tests/core/launch/headless_faults_test.cpp) requires of run_trial.
#include <gtest/gtest.h>

#include <QSignalSpy>

#include "tests/core/launch/supervision_faults.h"
#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/wait_for.h"
#include "ui/runner/trial_runner.h"

using namespace tunebench;
using namespace tunebench::ui;
using tunebench::test::FaultCase;

namespace {

const char* const kFakeSsh = TUNEBENCH_TEST_DATA_DIR "/../core/launch/fake_ssh.sh";

}  // namespace

// At namespace scope: TEST_P derives a class with external linkage from it.
class RunnerFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(RunnerFaults, EndsWithTheSharedWords) {
  const FaultCase& c = GetParam();
  tunebench::test::FaultEnvironment fault(c);
  TrialRequest request;
  request.id = QString::fromStdString(c.name);
  request.config = tunebench::test::fault_config(c, TUNEBENCH_FAKE_WORKER, kFakeSsh);
  request.worker_program = c.worker.empty() ? QStringLiteral(TUNEBENCH_FAKE_WORKER) : QString::fromStdString(c.worker);

  TrialRunner runner;
  runner.setGraceMs(2000);
  int finished = 0;
  TrialOutcome outcome;
  QObject::connect(&runner, &TrialRunner::finished, [&](const TrialOutcome& o) {
    outcome = o;
    ++finished;
  });
  QObject::connect(&runner, &TrialRunner::progress, [&](const TrialProgress& p) {
    if (c.stop_at_step >= 0 && p.step >= c.stop_at_step) runner.stop();
  });
  const bool started = runner.start(request);
  EXPECT_EQ(started, !c.invalid_config);
  TB_WAIT_FOR(finished == 1, kTimeoutMs);

  EXPECT_EQ(outcome.status, c.status) << protocol::to_string(outcome.status) << ": " << outcome.reason.toStdString();
  EXPECT_EQ(outcome.exit_code, c.exit_code) << outcome.reason.toStdString();
  EXPECT_EQ(outcome.reason.toStdString(), c.reason);
  EXPECT_EQ(outcome.failed_rank, c.failed_rank);
  EXPECT_TRUE(outcome.stderr_tail.contains(QString::fromStdString(c.stderr_has))) << outcome.stderr_tail.toStdString();
  for (qint64 pid : runner.pids()) EXPECT_FALSE(tunebench::ui::test::process_alive(pid)) << pid;
}

INSTANTIATE_TEST_SUITE_P(Faults, RunnerFaults, ::testing::ValuesIn(tunebench::test::fault_cases()),
                         [](const auto& info) { return tunebench::test::fault_name(info.param); });
