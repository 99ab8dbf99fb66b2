// The Analysis menu in the real MainWindow: comparing rows of the trials table, one-click
// follow-up trials from the diagnosis, and the sweep dialog's plan, queue and progress.
#include <gtest/gtest.h>

#include <QAction>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>

#include "tests/ui/compare/compare_test_util.h"
#include "tests/ui/wait_for.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/sweep_dialog.h"

namespace tunebench::ui {
namespace {

// Puts a recorded log into the window as if it had run here: a table row and its cached events.
int add_recorded(MainWindow& w, const protocol::TrialLog& log, const QString& id) {
  TrialRecord r;
  r.id = id;
  r.config = config::from_json(log.config()).config;
  r.status = protocol::TrialStatus::Done;
  w.liveTrials()->logs().insert(id, log);
  return w.trialsModel()->upsert(r);
}

void stop_everything(MainWindow& w) {
  w.queue()->stopAll();
  TB_WAIT_FOR(!w.queue()->runner()->isActive(), 20000);
}

TEST(AnalysisMenu, MenuHasCompareAndSweepBeforeHelp) {
  auto w = test::make_window();
  QMenu* menu = w->menu(QStringLiteral("menuAnalysis"));
  ASSERT_NE(menu, nullptr);
  ASSERT_NE(w->action(QStringLiteral("actionCompare")), nullptr);
  ASSERT_NE(w->action(QStringLiteral("actionSweep")), nullptr);
  EXPECT_TRUE(menu->actions().contains(w->action(QStringLiteral("actionCompare"))));
}

TEST(AnalysisMenu, SuggestionButtonQueuesTheFollowUpTrial) {
  auto w = test::make_window(test::two_gpu_machine());  // the logs are of two GPUs (the device check)
  add_recorded(*w, test::forum_log("forum_single.jsonl"), QStringLiteral("single"));
  add_recorded(*w, test::forum_log("forum_ddp.jsonl"), QStringLiteral("ddp"));
  ComparisonWindow* cmp = w->analysis()->compareRows({0, 1});
  ASSERT_NE(cmp, nullptr);
  EXPECT_EQ(cmp->trialNames(), (QStringList{QStringLiteral("4090 single"), QStringLiteral("4090 ddp x2")}));
  QPushButton* accum = nullptr;
  for (QPushButton* b : cmp->diagnosisView()->suggestionButtons())
    if (!accum && b->text().startsWith(QStringLiteral("Queue: grad_accum"))) accum = b;
  ASSERT_NE(accum, nullptr);
  accum->click();
  ASSERT_EQ(w->trialsModel()->rowCount(), 3);
  const TrialRecord& queued = w->trialsModel()->record(2);
  EXPECT_EQ(queued.config.grad_accum, 3);  // the suggestion's change (the pair's one grad_accum) ...
  EXPECT_EQ(queued.config.strategy, config::Strategy::Ddp);  // ... on the DDP trial's config
  EXPECT_EQ(queued.config.world_size, 2);
  EXPECT_NE(QString::fromStdString(queued.config.name).indexOf(QStringLiteral("grad_accum")), -1);
  // It is in the queue: running already (nothing else ran) or pending.
  const bool inQueue = w->queue()->runner()->isActive() || !w->queue()->pending().isEmpty() ||
                       queued.status != protocol::TrialStatus::Queued;
  EXPECT_TRUE(inQueue);
  stop_everything(*w);
}

TEST(AnalysisMenu, CompareWithoutLogsOpensNothing) {
  auto w = test::make_window();
  TrialRecord r;
  r.id = QStringLiteral("nolog");
  w->trialsModel()->upsert(r);
  EXPECT_EQ(w->analysis()->compareRows({0}), nullptr);
  EXPECT_EQ(w->analysis()->compareRows({}), nullptr);
}

TEST(AnalysisMenu, ProviderSuppliesLogsOfStoreTrials) {
  auto w = test::make_window();
  TrialRecord a, b;
  a.id = QStringLiteral("stored-a");
  b.id = QStringLiteral("stored-b");
  w->trialsModel()->upsert(a);
  w->trialsModel()->upsert(b);
  int asked = 0;
  w->analysis()->setTrialLogProvider([&](int row) -> std::optional<protocol::TrialLog> {
    ++asked;
    return test::forum_log(row == 0 ? "forum_single.jsonl" : "forum_ddp.jsonl");
  });
  ComparisonWindow* cmp = w->analysis()->compareRows({0, 1});
  ASSERT_NE(cmp, nullptr);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(cmp->report().comparison.trials.size(), 2u);
}

TEST(SweepDialog, PlansTheGridListsInvalidPointsAndQueuesEveryTrial) {
  auto w = test::make_window();
  SweepDialog* dialog = w->analysis()->openSweepDialog();
  ASSERT_NE(dialog, nullptr);
  dialog->setAxes({{"strategy", {"single", "ddp"}}, {"world_size", {"1", "2"}}});
  dialog->setRepeats(2);
  const analysis::SweepPlan plan = dialog->plan();
  EXPECT_EQ(plan.grid_size, 4u);
  EXPECT_EQ(plan.trials.size(), 4u);  // single x1 and ddp x2, twice each
  EXPECT_EQ(plan.invalid.size(), 2u);
  EXPECT_EQ(dialog->invalidList()->count(), 2);  // listed, not dropped
  EXPECT_TRUE(dialog->invalidList()->item(0)->text().contains(QStringLiteral("world_size")));
  EXPECT_EQ(dialog->queueButton()->text(), QStringLiteral("Queue 4 trials"));

  const int before = w->trialsModel()->rowCount();
  dialog->queueButton()->click();
  ASSERT_EQ(dialog->queuedIds().size(), 4);
  ASSERT_EQ(w->trialsModel()->rowCount(), before + 4);
  for (int i = 0; i < 4; ++i) {
    const TrialRecord& r = w->trialsModel()->record(before + i);
    EXPECT_EQ(r.id, dialog->queuedIds()[i]);
    EXPECT_EQ(r.config.strategy, plan.trials[size_t(i)].config.strategy);
    EXPECT_EQ(r.config.world_size, plan.trials[size_t(i)].config.world_size);
    EXPECT_EQ(r.config.name, plan.trials[size_t(i)].config.name);
  }
  EXPECT_FALSE(dialog->queueButton()->isEnabled());
  stop_everything(*w);  // the test checks the queue, not the runs
  // Progress counts finished trials of this sweep only.
  bool finished = false;
  QObject::connect(dialog, &SweepDialog::sweepFinished, dialog,
                   [&](const QStringList& ids, const std::vector<std::string>& keys) {
                     finished = ids.size() == 4 && keys == std::vector<std::string>{"strategy", "world_size"};
                   });
  TrialOutcome other;
  other.trial_id = QStringLiteral("not-in-the-sweep");
  dialog->onTrialFinished(other);
  for (const QString& id : dialog->queuedIds()) {
    TrialOutcome o;
    o.trial_id = id;
    dialog->onTrialFinished(o);
  }
  EXPECT_EQ(dialog->finishedCount(), 4);
  EXPECT_EQ(dialog->progressText(), QStringLiteral("sweep done: 4 of 4 trials"));
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace tunebench::ui
