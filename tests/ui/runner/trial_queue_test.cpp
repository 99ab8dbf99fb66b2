#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QSignalSpy>
#include <QTest>

#include "tests/ui/runner/runner_test_util.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"

using namespace tunebench::ui;
using namespace tunebench::ui::test;

TEST(TrialQueue, RunsQueuedTrialsOneAfterAnother) {
  TrialQueue queue;
  QStringList order;
  bool overlap = false;
  QObject::connect(&queue, &TrialQueue::trialStarting, [&](const QString& id) {
    overlap = overlap || queue.runner()->isActive();
    order << id;
  });
  QSignalSpy finished(&queue, &TrialQueue::trialFinished);
  QSignalSpy drained(&queue, &TrialQueue::drained);
  queue.enqueue(fake_request("a", 1, 3));
  queue.enqueue(fake_request("b", 2, 3));
  auto bad = fake_request("c", 1, 3);
  bad.config.steps = 0;  // refused before launch: the queue must go on
  queue.enqueue(bad);
  queue.enqueue(fake_request("d", 1, 2));
  TB_WAIT_FOR((drained.size()) == (1), 60000);
  EXPECT_EQ(order, QStringList({"a", "b", "c", "d"}));
  EXPECT_FALSE(overlap);
  ASSERT_EQ(finished.size(), 4);
  EXPECT_EQ(finished.at(2).at(0).value<TrialOutcome>().status, tunebench::protocol::TrialStatus::Failed);
  EXPECT_EQ(finished.at(3).at(0).value<TrialOutcome>().status, tunebench::protocol::TrialStatus::Done);
  EXPECT_TRUE(queue.isIdle());
}
