// Grouping trials by a knob (issue 15, W&B's run groups): the tree model under
// QAbstractItemModelTester, the group figures, regrouping when a trial's knob changes.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "ui/models/trial_groups_model.h"
#include "ui/models/trials_model.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
TrialRecord record(const char* id, config::Strategy strategy, int world, double stepMs, double tokens) {
  TrialRecord r;
  r.id = QString::fromLatin1(id);
  r.config.name = id;
  r.config.strategy = strategy;
  r.config.world_size = world;
  r.step_ms_median = stepMs;
  r.tokens_per_s = tokens;
  r.status = protocol::TrialStatus::Done;
  return r;
}
}  // namespace

TEST(TrialGroupsModel, GroupsByAKnobWithTheGroupsFigures) {
  TrialsModel trials;
  TrialGroupsModel groups(&trials);
  QAbstractItemModelTester tester(&groups, QAbstractItemModelTester::FailureReportingMode::Fatal);
  trials.upsert(record("a", config::Strategy::Ddp, 2, 400, 10000));
  trials.upsert(record("b", config::Strategy::Single, 1, 340, 6000));
  trials.upsert(record("c", config::Strategy::Ddp, 2, 1100, 3600));
  groups.setGroupKey(QStringLiteral("strategy"));
  ASSERT_EQ(groups.rowCount(), 2);
  EXPECT_EQ(groups.groupValue(0), QStringLiteral("ddp"));  // alphabetical for text values
  const QModelIndex ddp = groups.index(0, 0);
  EXPECT_EQ(groups.rowCount(ddp), 2);
  EXPECT_TRUE(ddp.data().toString().contains(QStringLiteral("= ddp")));
  EXPECT_EQ(groups.index(0, TrialsModel::Status).data().toString(), QStringLiteral("2 trial(s)"));
  EXPECT_EQ(groups.index(0, TrialsModel::StepMs).data().toString(), QStringLiteral("750.0"));  // median of 400 and 1100
  EXPECT_TRUE(groups.index(0, TrialsModel::TokensPerS).data().toString().contains(QStringLiteral("10,000")));
  // Leaves show the table's cells and map back to its rows.
  const QModelIndex leaf = groups.index(1, TrialsModel::Name, ddp);
  EXPECT_EQ(leaf.data().toString(), QStringLiteral("c"));
  EXPECT_EQ(groups.sourceRow(leaf), 2);
  EXPECT_EQ(groups.indexOfSourceRow(2).row(), 1);

  // Numeric knobs in numeric order; a changed knob regroups.
  groups.setGroupKey(QStringLiteral("world_size"));
  ASSERT_EQ(groups.rowCount(), 2);
  EXPECT_EQ(groups.groupValue(0), QStringLiteral("1"));
  trials.find(QStringLiteral("b"))->config.world_size = 2;
  trials.touch(QStringLiteral("b"));
  EXPECT_EQ(groups.rowCount(), 1);
  // A change that keeps the group (a live trial's progress) keeps the tree.
  trials.find(QStringLiteral("a"))->step = 7;
  trials.touch(QStringLiteral("a"));
  EXPECT_EQ(groups.rowCount(groups.index(0, 0)), 3);
  trials.removeTrial(QStringLiteral("c"));
  EXPECT_EQ(groups.rowCount(groups.index(0, 0)), 2);
}
