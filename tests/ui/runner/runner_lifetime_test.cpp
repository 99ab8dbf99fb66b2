// Lifetimes inside the runner (issue 16): the QProcess of a finished rank must not outlive its
// trial, and nothing may call back into a Rank that was freed when the next trial started.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QCoreApplication>
#include <QPointer>
#include <QProcess>
#include <QSignalSpy>

#include "tests/ui/runner/runner_test_util.h"
#include "ui/runner/trial_runner.h"

using namespace tunebench::ui;
using namespace tunebench::ui::test;

TEST(TrialRunnerLifetime, TheProcessesOfAnEarlierTrialAreDeleted) {
  TrialRunner runner;
  QSignalSpy finished(&runner, &TrialRunner::finished);
  ASSERT_TRUE(runner.start(fake_request("first", 2, 3)));
  TB_WAIT_FOR(finished.size() == 1, 30000);
  QList<QPointer<QProcess>> first;
  for (QProcess* p : runner.findChildren<QProcess*>()) first << p;
  ASSERT_FALSE(first.isEmpty());
  ASSERT_TRUE(runner.start(fake_request("second", 2, 3)));
  TB_WAIT_FOR(finished.size() == 2, 30000);
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  for (const auto& p : first) EXPECT_TRUE(p.isNull()) << "a process of the first trial is still alive";
  // At most the last trial's ranks remain (two), however many trials ran.
  ASSERT_TRUE(runner.start(fake_request("third", 1, 2)));
  TB_WAIT_FOR(finished.size() == 3, 30000);
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  EXPECT_LE(runner.findChildren<QProcess*>().size(), 1);
}
