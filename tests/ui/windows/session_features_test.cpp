// Session features of issue 15 items 2 and 9: every way to start a trial from someone else's
// session goes through the launch preview (a follow-up, a sweep: one preview for the grid), the
// Chrome trace of several trials, the remembered export folder and the sessions folder.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <fstream>
#include <set>

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QUrl>

#include <nlohmann/json.hpp>

#include "core/analysis/step_time.h"
#include "core/analysis/trial_metrics.h"
#include "core/protocol/trial_log.h"
#include "core/store/records.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"
#include "ui/models/metrics_model.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/sweep_dialog.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

void stop_everything(MainWindow& w) {
  w.queue()->stopAll();
  TB_WAIT_FOR(!w.queue()->runner()->isActive(), kTimeoutMs);
}
}  // namespace

TEST(SessionFeatures, AFollowUpOfAForeignTrialIsPreviewedFirst) {
  QTemporaryDir dir;
  auto w = make_window();
  w->sessionActions()->openSession(copy_of(dir, QStringLiteral(TUNEBENCH_SESSIONS_DIR "/cpu-tiny.tbsession")));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 2);
  w->analysis()->compareRows({0, 1});  // stored trials: loaded in the background, then shown
  TB_WAIT_FOR(w->analysis()->lastComparison() != nullptr, kTimeoutMs);
  ComparisonWindow* cmp = w->analysis()->lastComparison();
  ASSERT_FALSE(cmp->diagnosisView()->suggestionButtons().isEmpty());
  // The first suggestion that is valid on this machine (the others are refused with a reason).
  for (QPushButton* b : cmp->diagnosisView()->suggestionButtons()) {
    b->click();
    if (w->launcher()->pendingPreview()) break;
  }
  // Not queued until the user has seen what would run.
  ASSERT_NE(w->launcher()->pendingPreview(), nullptr) << w->launcher()->lastMessage().toStdString();
  EXPECT_EQ(w->trialsModel()->rowCount(), 2);
  w->launcher()->pendingPreview()->accept();
  EXPECT_EQ(w->trialsModel()->rowCount(), 3);
  stop_everything(*w);
}

TEST(SessionFeatures, ASweepOfAForeignConfigIsPreviewedOnceForTheGrid) {
  QTemporaryDir dir;
  auto w = make_window();
  w->sessionActions()->openSession(copy_of(dir, QStringLiteral(TUNEBENCH_SESSIONS_DIR "/cpu-tiny.tbsession")));
  wait_jobs(*w);
  w->trialsView()->selectRow(0);
  ASSERT_TRUE(w->sessionActions()->rerunWithChanges(w->sessionActions()->selectedTrialIds()[0]));
  SweepDialog* sweep = w->analysis()->openSweepDialog();
  sweep->setAxes({{"grad_accum", {"1", "2", "3"}}});
  sweep->setRepeats(1);
  sweep->queueButton()->click();
  LaunchPreviewDialog* preview = w->launcher()->pendingPreview();
  ASSERT_NE(preview, nullptr);
  EXPECT_EQ(w->trialsModel()->rowCount(), 2);
  const QString text = preview->findChild<QPlainTextEdit*>()->toPlainText();
  EXPECT_TRUE(text.startsWith(QStringLiteral("3 trials"))) << text.left(200).toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("grad_accum")));
  preview->accept();
  EXPECT_EQ(w->trialsModel()->rowCount(), 5);
  EXPECT_EQ(sweep->queuedIds().size(), 3);
  EXPECT_EQ(w->launcher()->pendingPreview(), nullptr);
  stop_everything(*w);
}

TEST(SessionFeatures, AChromeTraceOfSeveralTrialsHasAProcessPerTrialAndRank) {
  QTemporaryDir dir;
  auto w = make_window();
  for (const char* log : {"/gpu/h200-7b-single.jsonl", "/gpu/h200x2-7b-ddp-ckpt.jsonl", "/ui/synthetic-7b-ddp2.jsonl"})
    w->sessionActions()->importLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR) + QString::fromLatin1(log));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 3);
  w->trialsView()->selectAll();
  const QString path = dir.filePath(QStringLiteral("exports/trace.json"));
  QDir().mkpath(dir.filePath(QStringLiteral("exports")));
  ASSERT_TRUE(w->sessionActions()->exportChromeTrace(w->sessionActions()->selectedTrialIds(), path));
  wait_jobs(*w);
  std::ifstream in(path.toStdString());
  const auto trace = nlohmann::json::parse(in);
  std::set<int64_t> processes;
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "X") processes.insert(e["pid"].get<int64_t>());
    if (e.value("name", "") == "process_name") names.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(processes.size(), 1u + 2u + 2u);  // single, DDP x2, synthetic DDP x2
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(names.count("h200x2-7b-ddp-ckpt.jsonl \u00b7 rank 1") + names.count("w-7b-ddp-ckpt \u00b7 rank 1"), 1u)
      << *names.begin();
  // The folder is remembered for the next export dialog.
  EXPECT_EQ(w->sessionActions()->exportDir(), QFileInfo(path).absolutePath());
}

TEST(SessionFeatures, SessionsLiveInOneTunebenchFolder) {
  const QString dir = user_sessions_dir();
  EXPECT_TRUE(dir.endsWith(QStringLiteral("/tunebench/sessions"))) << dir.toStdString();
  EXPECT_FALSE(dir.contains(QStringLiteral("tunebench/tunebench"))) << dir.toStdString();
  EXPECT_TRUE(QFileInfo(dir).isDir());
}

// Issue 16: SessionActions stands on its own — the controller, a table's selection and a parent for
// dialogs; its menus and signals are its own (no MainWindow, no menu found by its title).
TEST(SessionActionsAlone, OwnsItsMenusAndReportsThroughSignals) {
  BackgroundJobs jobs;
  TrialsModel trials;
  SessionController session(&trials, &jobs);
  ASSERT_TRUE(session.newScratchSession());
  QItemSelectionModel selection(&trials);
  SessionActions actions(&session, &trials, &selection, nullptr, false);
  ASSERT_NE(actions.fileMenu(), nullptr);
  QStringList names;
  for (QAction* a : actions.fileMenu()->actions()) names << a->objectName();
  EXPECT_TRUE(names.contains(QStringLiteral("actionOpenSession")));
  EXPECT_TRUE(names.contains(QStringLiteral("actionSaveSessionAs")));
  EXPECT_TRUE(names.contains(QStringLiteral("actionImportLog")));
  EXPECT_EQ(actions.trialActions().size(), 4);
  EXPECT_NE(actions.examplesAction(), nullptr);
  EXPECT_NE(actions.contextMenu(), nullptr);
  // An importer added from outside (the trace import) is offered for its files.
  QStringList imported;  // the ranks of one run arrive together
  actions.addImporter({QStringLiteral("Traces"),
                       {QStringLiteral("*.pt.trace.json")},
                       [](const QString& p) { return p.endsWith(QStringLiteral(".pt.trace.json")); },
                       [&](const QStringList& paths) {
                         imported = paths;
                         return true;
                       }});
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(QStringLiteral("/tmp/rank0.pt.trace.json")),
                QUrl::fromLocalFile(QStringLiteral("/tmp/rank1.pt.trace.json"))});
  EXPECT_TRUE(actions.canDrop(&mime));
  EXPECT_TRUE(actions.drop(&mime));
  EXPECT_EQ(imported,
            (QStringList{QStringLiteral("/tmp/rank0.pt.trace.json"), QStringLiteral("/tmp/rank1.pt.trace.json")}));
  // "Run again" asks for the config through a signal; the form is not its business.
  TrialRecord r;
  r.id = QStringLiteral("t1");
  r.config.name = "mine";
  trials.upsert(r);
  std::vector<std::string> requested;
  QObject::connect(&actions, &SessionActions::configRequested, &actions,
                   [&](const config::TrialConfig& c, const QString&) { requested.push_back(c.name); });
  ASSERT_TRUE(actions.rerunWithChanges(QStringLiteral("t1")));
  EXPECT_EQ(requested, std::vector<std::string>{"mine (again)"});
}

// Issue 15 item 3 for stored trials: the row's step time is analysis::trial_step_ms (the slowest rank
// per step), not rank 0's own median from its done summary.
TEST(SessionFeatures, StoredTrialRowShowsTheTrialsStepTime) {
  store::TrialInfo info;
  info.id = 7;
  info.name = "ddp";
  info.step_count = 6;
  protocol::TrialLog steps;  // rank 0's own median was 4709 ms, rank 1's 5051 ms
  for (int rank = 0; rank < 2; ++rank) {
    for (int i = 0; i < 3; ++i) {
      protocol::Step s;
      s.step = i;
      s.start_us = 10'000'000 * i;
      s.end_us = s.start_us + (rank == 0 ? 4'709'000 : 5'051'000);
      steps.ranks[rank].steps.push_back(s);
    }
  }
  const ui::TrialRecord r = ui::to_trial_record(info, steps);
  EXPECT_DOUBLE_EQ(r.step_ms_median, 5051.0);
  EXPECT_DOUBLE_EQ(r.step_ms_median, analysis::trial_step_ms(steps).median);
}

TEST(MetricsEverywhere, AStoredRowsThroughputIsTheComparisonsNotASumOfRanks) {
  // DDP tokens/s read 657 live and in the comparison, 666 in the table after reopening: the
  // stored row summed each rank's own figure (tokens over that rank's median step).
  store::TrialInfo info;
  info.id = 7;
  info.name = "ddp";
  info.step_count = 6;
  protocol::TrialLog steps;  // each rank's own figure: 4096 tokens over 4.709 s and over 5.051 s
  for (int rank = 0; rank < 2; ++rank) {
    for (int i = 0; i < 3; ++i) {
      protocol::Step s;
      s.step = i;
      s.tokens = 4096;
      s.start_us = 10'000'000 * i;
      s.end_us = s.start_us + (rank == 0 ? 4'709'000 : 5'051'000);
      steps.ranks[rank].steps.push_back(s);
    }
  }
  const ui::TrialRecord r = ui::to_trial_record(info, steps);
  const double defined = analysis::analyze(steps).tokens_per_s_total.median;  // 8192 / 5.051 s
  EXPECT_NEAR(defined, 8192.0 / 5.051, 1e-6);
  EXPECT_NEAR(r.tokens_per_s, defined, 1e-6);
}

TEST(MetricsEverywhere, TheTableTheLiveRowAndTheComparisonShowOneThroughput) {
  // A real H200 DDP log whose ranks' medians differ: imported (the stored row), replayed (the
  // live row, TrialStats) and compared (the metrics table) must show the analysis' one figure.
  const QString log = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/gpu/h200x2-7b-ddp-ckpt-no-p2p.jsonl");
  const auto metrics = analysis::analyze(protocol::read_trial_log_file(log.toStdString()));
  const double tokens = metrics.tokens_per_s_total.median;
  const double step = metrics.step_ms.median;
  ASSERT_GT(tokens, 0);
  auto w = make_window(two_gpu_machine());
  ASSERT_TRUE(w->sessionActions()->importLog(log));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  const TrialRecord stored = w->trialsModel()->record(0);
  EXPECT_NEAR(stored.tokens_per_s, tokens, 1e-6 * tokens);
  EXPECT_NEAR(stored.step_ms_median, step, 1e-9);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->replayLog(log, 0));
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  const TrialRecord live = w->trialsModel()->record(1);
  ASSERT_TRUE(live.replay);
  EXPECT_NEAR(live.tokens_per_s, tokens, 1e-6 * tokens);
  EXPECT_NEAR(live.step_ms_median, step, 1e-9);
  ComparisonWindow* c = w->analysis()->compareRows({0});
  if (!c) {
    TB_WAIT_FOR((c = w->analysis()->lastComparison()) != nullptr, kTimeoutMs);
  }
  auto* model = c->findChild<MetricsModel*>();
  ASSERT_NE(model, nullptr);
  const int row = model->rowOf(QStringLiteral("tokens_per_s_total"));
  ASSERT_GE(row, 0);
  EXPECT_NEAR(model->index(row, 1).data(MetricsModel::MedianRole).toDouble(), tokens, 1e-6 * tokens);
  c->close();
}
