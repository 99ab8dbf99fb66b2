#include <gtest/gtest.h>

#include "core/analysis/step_time.h"

#include <QAbstractItemModelTester>
#include <QBrush>

#include "ui/models/trial_stats.h"
#include "ui/models/trials_model.h"

using namespace tunebench;
using namespace tunebench::ui;

TEST(TrialsModel, RowsFollowRecordsAndFailedRowsAreRed) {
  TrialsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  TrialRecord a;
  a.id = "a";
  a.config.name = "tiny";
  a.steps = 20;
  TrialRecord b = a;
  b.id = "b";
  EXPECT_EQ(model.upsert(a), 0);
  EXPECT_EQ(model.upsert(b), 1);
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.data(model.index(0, TrialsModel::Status), Qt::DisplayRole).toString(), "queued");

  TrialRecord* r = model.find("b");
  ASSERT_NE(r, nullptr);
  r->status = protocol::TrialStatus::Failed;
  r->reason = "rank 1 failed: signal 11 (SIGSEGV)";
  r->stderr_tail = "boom";
  model.touch("b");
  const QModelIndex failed = model.index(1, TrialsModel::Reason);
  EXPECT_EQ(model.data(failed, Qt::DisplayRole).toString(), r->reason);
  EXPECT_TRUE(model.data(failed, Qt::BackgroundRole).value<QBrush>().color().red() > 200);
  EXPECT_TRUE(model.data(failed, Qt::ToolTipRole).toString().contains("boom"));
  EXPECT_FALSE(model.data(model.index(0, 0), Qt::BackgroundRole).isValid());

  model.removeTrial("a");
  EXPECT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.rowOf("b"), 0);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(TrialStats, MedianOfMeasuredStepsAndTotalThroughput) {
  TrialStats stats;
  EventBatch batch;
  for (int rank = 0; rank < 2; ++rank)
    for (int i = 0; i < 5; ++i) {
      protocol::Step s;
      s.step = i;
      s.warmup = i < 2;
      s.step_ms = i < 2 ? 1000.0 : 100.0 + 10.0 * i;  // measured: 120, 130, 140
      s.tokens = 512;
      batch.push_back({{1, "t", rank, i}, s});
    }
  stats.add(batch);
  EXPECT_DOUBLE_EQ(stats.stepMsMedian(), 130.0);
  EXPECT_EQ(stats.worldSize(), 2);
  EXPECT_NEAR(stats.tokensPerSecond(), 2 * 512 / 0.130, 1e-6);
}

// Issue 15 item 3: the table showed rank 0's median (4,709 ms) where the comparison showed the
// slowest rank's (5,051 ms). Each step takes its slowest rank's time, the trial the median of those.
TEST(TrialStats, StepTimeIsTheSlowestRanksAsInTheComparison) {
  TrialStats stats;
  EventBatch batch;
  protocol::TrialLog log;
  for (int rank = 0; rank < 2; ++rank)
    for (int i = 0; i < 4; ++i) {
      protocol::Step s;
      s.step = i;
      s.warmup = i == 0;
      s.start_us = 1'000'000 * i;
      s.end_us = s.start_us + (rank == 0 ? 100'000 : 150'000 + 10'000 * i);  // rank 1 is the slow one
      s.step_ms = (s.end_us - s.start_us) / 1000.0;
      s.tokens = 512;
      batch.push_back({{1, "t", rank, s.start_us}, s});
      log.add(batch.back());
    }
  stats.add(batch);
  EXPECT_DOUBLE_EQ(stats.stepMsMedian(), 170.0);  // rank 1's 160, 170, 180; rank 0's 100 would be wrong
  EXPECT_DOUBLE_EQ(stats.stepMsMedian(), analysis::trial_step_ms(log).median);
}
