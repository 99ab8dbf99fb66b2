// TrialRunner against the fake worker: real processes, real sockets, no libtorch.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QSignalSpy>
#include <QTest>

#include "tests/ui/runner/runner_test_util.h"
#include "ui/runner/trial_runner.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

struct Recorder {
  explicit Recorder(TrialRunner& runner) {
    QObject::connect(&runner, &TrialRunner::eventsArrived, [this](const EventBatch& b) {
      ++batches;
      for (const auto& e : b) {
        ++events;
        if (e.is<protocol::Step>()) ++steps;
        ranks.insert(e.header.rank);
      }
    });
    QObject::connect(&runner, &TrialRunner::logLine, [this](const LogLine& l) { logs << l.text; });
    QObject::connect(&runner, &TrialRunner::progress, [this](const TrialProgress& p) { last_progress = p; });
    QObject::connect(&runner, &TrialRunner::finished, [this](const TrialOutcome& o) {
      outcome = o;
      ++finished;
    });
  }
  int batches = 0, events = 0, steps = 0, finished = 0;
  std::set<int> ranks;
  QStringList logs;
  TrialProgress last_progress;
  TrialOutcome outcome;
};

}  // namespace

TEST(TrialRunner, RunsTwoRanksToCompletion) {
  TrialRunner runner;
  Recorder rec(runner);
  ASSERT_TRUE(runner.start(fake_request("ok2", 2, 6)));
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Done) << rec.outcome.reason.toStdString();
  EXPECT_EQ(rec.steps, 12);
  EXPECT_EQ(rec.ranks, (std::set<int>{0, 1}));
  EXPECT_LT(rec.batches, rec.events);  // batched, not one signal per event
  EXPECT_EQ(rec.last_progress.step, 6);
  EXPECT_EQ(rec.last_progress.steps, 6);
  EXPECT_TRUE(rec.logs.filter("fake stdout line from rank 1").size() == 1) << rec.logs.join('\n').toStdString();
  EXPECT_TRUE(rec.logs.filter("rank 0 of 2 starting").size() == 1);
  EXPECT_FALSE(runner.isActive());
}

TEST(TrialRunner, CrashingRankFailsTheTrialAndStopsTheOthers) {
  FakeMode mode("crash", 1, 2);
  TrialRunner runner;
  Recorder rec(runner);
  auto request = fake_request("crash", 2, 10000);  // rank 0 would run for minutes
  ASSERT_TRUE(runner.start(request));
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Failed);
  EXPECT_EQ(rec.outcome.failed_rank, 1);
  EXPECT_TRUE(rec.outcome.reason.contains("rank 1")) << rec.outcome.reason.toStdString();
  EXPECT_TRUE(rec.outcome.reason.contains("SIGSEGV")) << rec.outcome.reason.toStdString();
  EXPECT_TRUE(rec.outcome.stderr_tail.contains("null pointer")) << rec.outcome.stderr_tail.toStdString();
  for (qint64 pid : runner.pids()) EXPECT_FALSE(process_alive(pid)) << pid;
}

TEST(TrialRunner, ExitCodeAndErrorEventAreReportedInWords) {
  FakeMode mode("exit:3", 0, 1);
  TrialRunner runner;
  Recorder rec(runner);
  ASSERT_TRUE(runner.start(fake_request("oom", 1, 50)));
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Failed);
  EXPECT_TRUE(rec.outcome.reason.contains("out of memory")) << rec.outcome.reason.toStdString();
  EXPECT_TRUE(rec.outcome.reason.contains("fake failure with exit code 3")) << rec.outcome.reason.toStdString();
}

TEST(TrialRunner, StopKillsEveryRankEvenOneIgnoringSigterm) {
  FakeMode mode("ignore-term", 1, 1);
  TrialRunner runner;
  runner.setGraceMs(500);
  Recorder rec(runner);
  ASSERT_TRUE(runner.start(fake_request("stop", 2, 100000)));
  // Rank 1 must be past its signal(SIGTERM, SIG_IGN) (it says hello after it) before we stop.
  TB_WAIT_FOR(rec.steps >= 2 && rec.ranks.count(1) == 1, kTimeoutMs);
  const auto pids = runner.pids();
  ASSERT_EQ(pids.size(), 2u);
  for (qint64 pid : pids) EXPECT_TRUE(process_alive(pid));
  runner.stop();
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Stopped);
  for (qint64 pid : pids) EXPECT_FALSE(process_alive(pid)) << pid;
  EXPECT_FALSE(rec.logs.filter("SIGKILL").isEmpty());
}

TEST(TrialRunner, SilentRankIsReportedAsHung) {
  FakeMode mode("hang", 0, 1);
  TrialRunner runner;
  runner.setGraceMs(500);
  Recorder rec(runner);
  auto request = fake_request("hang", 1, 100);
  request.config.collective_timeout_s = 1.0;
  ASSERT_TRUE(runner.start(request));
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Failed);
  EXPECT_TRUE(rec.outcome.reason.contains("hung")) << rec.outcome.reason.toStdString();
  for (qint64 pid : runner.pids()) EXPECT_FALSE(process_alive(pid));
}

TEST(TrialRunner, MissingWorkerIsAFailureNotACrash) {
  TrialRunner runner;
  Recorder rec(runner);
  auto request = fake_request("missing", 1, 3);
  request.worker_program = "/nonexistent/tunebench-worker";
  runner.start(request);
  TB_WAIT_FOR((rec.finished) == (1), kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Failed);
  EXPECT_TRUE(rec.outcome.reason.contains("could not start")) << rec.outcome.reason.toStdString();
}

TEST(TrialRunner, InvalidConfigIsRefusedBeforeLaunch) {
  TrialRunner runner;
  Recorder rec(runner);
  auto request = fake_request("bad", 1, 3);
  request.config.warmup = 5;
  EXPECT_FALSE(runner.start(request));
  EXPECT_EQ(rec.finished, 1);
  EXPECT_TRUE(rec.outcome.reason.contains("warm-up")) << rec.outcome.reason.toStdString();
}
