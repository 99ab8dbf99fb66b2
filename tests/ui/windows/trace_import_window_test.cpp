// torch.profiler traces in the window: imported off the GUI thread with a progress dialog (File >
// Import and drag and drop), cancel and bad files leave the session as it was, the imported trial
// compares and diagnoses like any other, and Trial > Settings… fills in its unknown settings.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <dirent.h>

#include <algorithm>

#include <QApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUrl>

#include "core/store/session_store.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/timeline_plot.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trace_import_actions.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
constexpr int kTimeoutMs = 60000;

QStringList traces(const char* run) {
  const QString dir = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/traces/") + QLatin1String(run);
  QStringList files;
  if (DIR* d = opendir(dir.toLocal8Bit().constData())) {
    while (dirent* e = readdir(d))
      if (QString::fromLocal8Bit(e->d_name).endsWith(QStringLiteral(".pt.trace.json.gz")))
        files << dir + QLatin1Char('/') + QString::fromLocal8Bit(e->d_name);
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Imports through the window's own path and waits for the job to end; true when a row was added.
bool import_and_wait(MainWindow& w, const QStringList& files, const QStringList& settings = {}) {
  TraceImportActions* t = w.sessionActions()->traceImport();
  QSignalSpy ended(t, &TraceImportActions::traceImportEnded);
  const int rows = w.trialsModel()->rowCount();
  if (!t->importTraces(files, {}, settings)) return false;
  EXPECT_NE(t->progressDialog(), nullptr);  // shown while the worker thread reads
  EXPECT_TRUE(QTest::qWaitFor([&] { return ended.size() == 1; }, kTimeoutMs));
  EXPECT_EQ(t->runningImport(), nullptr);
  return w.trialsModel()->rowCount() == rows + 1;
}

void drop(MainWindow& w, const QStringList& files) {
  QMimeData mime;
  QList<QUrl> urls;
  for (const QString& f : files) urls << QUrl::fromLocalFile(f);
  mime.setUrls(urls);
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  enter.setAccepted(false);
  QApplication::sendEvent(&w, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent event(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &event);
}
}  // namespace

TEST(TraceImportWindow, DdpTracesBecomeOneTrialWithTwoRanks) {
  auto w = make_window();
  ASSERT_TRUE(import_and_wait(*w, traces("ddp-nw4")));
  const TrialRecord r = w->trialsModel()->record(0);
  EXPECT_EQ(r.status, TrialRecord::Status::Succeeded);
  EXPECT_EQ(r.config.world_size, 2);
  EXPECT_EQ(r.config.model, "unknown");
  EXPECT_EQ(r.step, 4);
  EXPECT_TRUE(w->statusBar()->currentMessage().contains("Imported ddp-nw4 from torch.profiler traces: 2 of 2"))
      << w->statusBar()->currentMessage().toStdString();
  // The live views show it as a run: every interval of both ranks on the timeline.
  EXPECT_GT(w->liveView()->timeline()->barCount(), 8u * 4u);
  const auto loaded = w->session()->loadTrial(r.id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->log.ranks.size(), 2u);

  // It compares and diagnoses like a native trial: the comparison window opens on it.
  ASSERT_TRUE(import_and_wait(*w, traces("single-nw0")));
  ComparisonWindow* c = w->analysis()->compareRows({0, 1});
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->report().comparison.trials.size(), 2u);
  EXPECT_TRUE(c->report().comparison.trials[0].has_comm());
  bool data_bound = false;
  for (const auto& d : c->report().diagnoses)
    for (const auto& f : d.findings) data_bound = data_bound || f.kind == analysis::FindingKind::DataBound;
  EXPECT_TRUE(data_bound);
  c->close();
}

TEST(TraceImportWindow, DroppingTracesImportsThemAsOneTrial) {
  auto w = make_window();
  QSignalSpy ended(w->sessionActions()->traceImport(), &TraceImportActions::traceImportEnded);
  drop(*w, traces("fsdp2-nw4"));
  TB_WAIT_FOR(ended.size() == 1, kTimeoutMs);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_EQ(w->trialsModel()->record(0).config.world_size, 2);
  EXPECT_EQ(w->trialsModel()->record(0).config.strategy, config::Strategy::Fsdp);
}

TEST(TraceImportWindow, CancelAndBadFilesAddNothing) {
  QTemporaryDir dir;
  auto w = make_window();
  TraceImportActions* t = w->sessionActions()->traceImport();
  // Cancel at once (the dialog's button): the thread stops at its next chunk.
  QSignalSpy ended(t, &TraceImportActions::traceImportEnded);
  ASSERT_TRUE(t->importTraces(traces("ddp-nw4")));
  ASSERT_NE(t->progressDialog(), nullptr);
  QPushButton* cancel = t->progressDialog()->findChild<QPushButton*>();
  ASSERT_NE(cancel, nullptr);
  cancel->click();
  TB_WAIT_FOR(ended.size() == 1, kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_TRUE(w->statusBar()->currentMessage().contains("Import cancelled"));

  // A truncated rank: the message box says which file and why.
  QFile whole(traces("ddp-nw4")[1]);
  ASSERT_TRUE(whole.open(QIODevice::ReadOnly));
  const QString cut = dir.filePath("rank1.pt.trace.json.gz");
  QFile part(cut);
  ASSERT_TRUE(part.open(QIODevice::WriteOnly));
  part.write(whole.read(whole.size() / 2));
  part.close();
  EXPECT_FALSE(import_and_wait(*w, {traces("ddp-nw4")[0], cut}));
  ASSERT_NE(w->sessionActions()->lastMessageBox(), nullptr);
  const QString text = w->sessionActions()->lastMessageBox()->text();
  EXPECT_TRUE(text.contains("rank1.pt.trace.json.gz: the gzip stream ends before its end marker"))
      << text.toStdString();
  EXPECT_TRUE(text.contains("Nothing was added to the session"));

  // Neither a log nor a trace.
  const QString other = dir.filePath("other.json");
  QFile f(other);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("{\"a\": 1}\n");
  f.close();
  EXPECT_FALSE(w->sessionActions()->importFiles({other}));
  EXPECT_TRUE(w->sessionActions()->lastError().contains("is neither a Tunebench event log"));
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  const auto reader =
      store::SessionStore::open(w->session()->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_TRUE(reader.list_trials().empty());
}

TEST(TraceImportWindow, SettingsDialogFillsInUnknownSettings) {
  auto w = make_window();
  ASSERT_TRUE(import_and_wait(*w, traces("single-nw4"), {"micro_batch=8"}));
  const QString id = w->trialsModel()->record(0).id;
  KnownSettingsDialog* d = w->sessionActions()->traceImport()->showSettings(id);
  ASSERT_NE(d, nullptr);
  QLineEdit* seq = d->field("seq_len");
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->text().isEmpty());  // unknown
  EXPECT_EQ(seq->placeholderText(), "unknown");
  EXPECT_TRUE(seq->isReadOnly());
  EXPECT_EQ(d->field("micro_batch")->text(), "8");
  EXPECT_EQ(d->field("strategy")->text(), "single");  // from the trace
  ASSERT_TRUE(d->editButton()->isEnabled());

  d->editButton()->click();
  EXPECT_FALSE(seq->isReadOnly());
  QTest::keyClicks(seq, "512");
  d->field("grad_accum")->setText("lots");
  d->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
  // A bad value: the dialog stays with the reason, nothing stored.
  EXPECT_TRUE(d->isVisible());
  EXPECT_TRUE(d->findChild<QLabel*>("knownSettingsProblems")->text().contains("grad_accum=lots"));
  EXPECT_FALSE(w->session()->trialInfo(id)->config.contains("seq_len"));
  d->field("grad_accum")->setText("1");
  d->field("micro_batch")->clear();  // forget it
  QPointer<KnownSettingsDialog> alive(d);
  d->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
  TB_WAIT_FOR(alive.isNull() || !alive->isVisible(), 5000);
  const auto config = w->session()->trialInfo(id)->config;
  EXPECT_EQ(config["seq_len"], 512);
  EXPECT_EQ(config["grad_accum"], 1);
  EXPECT_FALSE(config.contains("micro_batch"));
  const auto env = w->session()->store()->trial_environment(w->session()->storeId(id));
  EXPECT_EQ(env.at(0).config["seq_len"], 512);  // what the analysis reads

  // A native trial's settings: shown, not editable.
  ASSERT_TRUE(w->sessionActions()->importLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/analysis/forum_single.jsonl")));
  KnownSettingsDialog* native = w->sessionActions()->traceImport()->showSettings(w->trialsModel()->record(1).id);
  ASSERT_NE(native, nullptr);
  EXPECT_FALSE(native->editButton()->isEnabled());
  EXPECT_FALSE(native->field("micro_batch")->text().isEmpty());
  native->close();
}
