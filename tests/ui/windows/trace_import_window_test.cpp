// torch.profiler traces in the window: an importer of SessionActions (File > Import and drag and
// drop hand it all of a gesture's traces), imported as a background job with progress and a
// Cancel, cancel and bad files leave the session as it was, the imported trial is shown, compares
// and diagnoses like any other, and Trial > Settings… (opened without blocking) fills in its
// unknown settings.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include <QApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QUrl>

#include "core/analysis/trial_metrics.h"
#include "core/store/session_store.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/windows/log_pane.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trace_import_actions.h"
#include "ui/windows/trial_viewer.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
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
  TraceImportActions* t = w.traceImport();
  QSignalSpy ended(t, &TraceImportActions::traceImportEnded);
  const int rows = w.trialsModel()->rowCount();
  if (!t->importTraces(files, {}, settings)) return false;
  EXPECT_NE(t->progressDialog(), nullptr);  // shown while the job reads
  EXPECT_TRUE(t->isImporting());
  EXPECT_TRUE(QTest::qWaitFor([&] { return ended.size() == 1; }, kTimeoutMs));
  EXPECT_FALSE(t->isImporting());
  EXPECT_EQ(t->progressDialog(), nullptr);
  return w.trialsModel()->rowCount() == rows + 1;
}

// Holds the window's job thread until released, so the next jobs wait in the queue. The flags
// are shared with the job: it may read them after the blocker is gone (ASan found the stack
// version read after its scope).
class JobBlocker {
 public:
  explicit JobBlocker(BackgroundJobs* jobs) : m_flags(std::make_shared<Flags>()) {
    jobs->submit(QStringLiteral("blocker"), [flags = m_flags](JobProgress&) {
      flags->started = true;
      while (!flags->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return BackgroundJobs::Apply();
    });
    while (!m_flags->started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~JobBlocker() { release(); }
  void release() { m_flags->release = true; }

 private:
  struct Flags {
    std::atomic<bool> started{false}, release{false};
  };
  std::shared_ptr<Flags> m_flags;
};

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

// Two Gloo ranks with the script's own all-reduce (no DDP, no FSDP): the trace does not show a
// strategy, and the table says so instead of the default "single" of a 2-rank trial.
TEST(TraceImportWindow, AStrategyTheTraceDoesNotShowIsUnknownInTheTable) {
  auto w = make_window();
  ASSERT_TRUE(import_and_wait(*w, traces("waits-gloo")));
  ASSERT_TRUE(import_and_wait(*w, traces("ddp-nw4")));
  wait_jobs(*w);
  QStringList strategies;
  for (int row = 0; row < w->trialsModel()->rowCount(); ++row)
    strategies << w->trialsModel()->index(row, TrialsModel::Strategy).data().toString();
  strategies.sort();
  EXPECT_EQ(strategies, (QStringList{QStringLiteral("ddp"), QStringLiteral("unknown")}));
}

TEST(TraceImportWindow, DdpTracesBecomeOneTrialWithTwoRanks) {
  auto w = make_window();
  QSignalSpy progress(w->jobs(), &BackgroundJobs::progress);
  ASSERT_TRUE(import_and_wait(*w, traces("ddp-nw4")));
  // The job reported the bytes it read (the progress dialog and the status bar show them).
  bool bytes = false;
  for (const auto& p : progress)
    bytes = bytes || (p.at(4).toString().startsWith("reading 2 trace(s): ") && p.at(4).toString().contains(" of ") &&
                      p.at(3).toLongLong() > 0);
  EXPECT_TRUE(bytes);
  const TrialRecord r = w->trialsModel()->record(0);
  EXPECT_EQ(r.status, protocol::TrialStatus::Done);
  EXPECT_EQ(r.config.world_size, 2);
  EXPECT_EQ(r.config.model, "unknown");
  EXPECT_EQ(r.step, 4);
  EXPECT_TRUE(w->statusBar()->currentMessage().contains("(imported trace, 2 ranks) from torch.profiler traces: 2 of 2 rank(s), 4 steps,"))
      << w->statusBar()->currentMessage().toStdString();
  // It becomes the trial shown, drawn as a run: every interval of both ranks on the timeline.
  wait_jobs(*w);
  EXPECT_EQ(w->viewer()->shown(), r.id);
  EXPECT_GT(w->liveView()->timeline()->barCount(), 8u * 4u);
  // The table's columns fit the new row (its name and "unknown" model are not elided).
  QTableView* table = w->trialsView();
  for (int column : {int(TrialsModel::Name), int(TrialsModel::Model)}) {
    const QString text = w->trialsModel()->index(0, column).data().toString();
    TB_EXPECT_WAIT_FOR(table->columnWidth(column) > table->fontMetrics().horizontalAdvance(text), 2000);
  }
  EXPECT_GE(table->horizontalHeader()->length(), table->viewport()->width());  // the reason still stretches
  const auto loaded = w->session()->loadTrial(r.id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->log.ranks.size(), 2u);

  // It compares and diagnoses like a native trial: the comparison window opens on it.
  ASSERT_TRUE(import_and_wait(*w, traces("single-nw0")));
  // Stored trials load in the background; the comparison opens once they are there.
  EXPECT_EQ(w->analysis()->compareRows({0, 1}), nullptr);
  wait_jobs(*w);
  ComparisonWindow* c = w->analysis()->lastComparison();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->report().comparison.trials.size(), 2u);
  EXPECT_TRUE(c->report().comparison.trials[0].has_comm());
  bool data_bound = false;
  for (const auto& d : c->report().diagnoses)
    for (const auto& f : d.findings) data_bound = data_bound || f.kind == analysis::FindingKind::DataBound;
  EXPECT_TRUE(data_bound);
  c->close();
}

TEST(TraceImportDefects, AnImportedTrialSaysWhatItLacksAndCountsItsStepsAsTheTableDoes) {
  // Empty telemetry axes with no note, tokens/s drawn as 0 at every step, and "8 steps" in the
  // log for a trial whose row says 4. At a desktop's size: the throughput panel needs 230 px of
  // the step-time plot, which the default test window (with issue 41's memory strip) leaves short.
  auto w = make_window();
  w->resize(1500, 950);
  ASSERT_TRUE(import_and_wait(*w, traces("ddp-nw4")));
  wait_jobs(*w);
  const TrialRecord r = w->trialsModel()->record(0);
  ASSERT_EQ(w->viewer()->shown(), r.id);
  w->liveView()->replotNow();
  TelemetryPlot* telemetry = w->liveView()->telemetry();
  // No panel is drawn empty: memory and power have no samples; the utilisation panel shows only
  // when the trace's kernel-sampled steps give the GPU-busy line.
  bool busy = false;
  for (int rank = 0; rank < r.config.world_size; ++rank) busy = busy || telemetry->busyPoints(rank) > 0;
  EXPECT_EQ(telemetry->panel(0)->visible(), busy);
  for (int i = 1; i < 3; ++i) EXPECT_FALSE(telemetry->panel(i)->visible()) << "empty panel " << i;
  auto* note = telemetry->findChild<QLabel*>(QStringLiteral("telemetryNote"));
  ASSERT_NE(note, nullptr);
  EXPECT_FALSE(note->isHidden());
  EXPECT_TRUE(note->text().contains(QStringLiteral("no telemetry"), Qt::CaseInsensitive)) << note->text().toStdString();
  StepTimePlot* steps = w->liveView()->stepTime();
  EXPECT_EQ(steps->throughputPoints(), 0);  // unknown, not 0
  auto* unknown = steps->findChild<QLabel*>(QStringLiteral("throughputNote"));
  ASSERT_NE(unknown, nullptr);
  EXPECT_TRUE(steps->showsThroughput()) << "step-time plot " << steps->height() << " px high";
  EXPECT_FALSE(unknown->isHidden());
  w->logPane()->flush();
  const QString log = w->logPane()->toPlainText();
  EXPECT_TRUE(log.contains(QStringLiteral("%1 steps").arg(r.step))) << log.toStdString();
  EXPECT_FALSE(log.contains(QStringLiteral("%1 steps").arg(2 * r.step))) << log.toStdString();
}

TEST(TraceImportDefects, OneRankOfTwoHasOneStepCountAndOnlyItsRankInTheLegend) {
  // Issue 44: one rank of a 2-rank trace read "2 / 4" in the table and "2 steps per rank" in the
  // status bar (records / world size), the legend listed rank 1, and the trial was named after
  // its folder.
  auto w = make_window();
  const QString rank0 = traces("ddp-nw4").first();
  ASSERT_TRUE(import_and_wait(*w, {rank0}));
  wait_jobs(*w);
  const TrialRecord r = w->trialsModel()->record(0);
  const auto loaded = w->session()->loadTrial(r.id);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->log.ranks.size(), 1u);
  const int64_t steps = int64_t(loaded->log.ranks.begin()->second.steps.size());
  ASSERT_GT(steps, 1);
  EXPECT_EQ(r.step, steps);
  EXPECT_EQ(w->trialsModel()->index(0, TrialsModel::Progress).data().toString(),
            QStringLiteral("%1 / %1").arg(steps));
  const QString status = w->statusBar()->currentMessage();
  EXPECT_TRUE(status.contains(QStringLiteral("1 of 2 rank(s), %1 steps,").arg(steps))) << status.toStdString();
  EXPECT_TRUE(w->liveView()->title().contains(QStringLiteral("1 of 2 ranks, %1 steps").arg(steps)))
      << w->liveView()->title().toStdString();
  // The table's Ranks column says what was imported, as the title does (it said the world size, 2).
  EXPECT_EQ(w->trialsModel()->index(0, TrialsModel::Ranks).data().toString().toStdString(), "1 of 2");
  // Named after what it is, not the folder it lay in.
  QString stem = QFileInfo(rank0).fileName();
  stem.chop(int(strlen(".pt.trace.json.gz")));
  EXPECT_EQ(QString::fromStdString(r.config.name), stem + QStringLiteral(" (imported trace, 1 rank)"));
  // The step-time legend lists the imported rank only.
  StepTimePlot* plot = w->liveView()->stepTime();
  QStringList names;
  for (int i = 0; i < plot->legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) names << item->plottable()->name();
  EXPECT_EQ(names, QStringList{QStringLiteral("rank 0")});
}

TEST(TraceImportWindow, DroppingTracesImportsThemAsOneTrial) {
  auto w = make_window();
  QSignalSpy ended(w->traceImport(), &TraceImportActions::traceImportEnded);
  // One gesture: an event log (the built-in importer) and one run's two traces (one trial).
  drop(*w, QStringList{QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/analysis/forum_single.jsonl")} + traces("fsdp2-nw4"));
  TB_WAIT_FOR(ended.size() == 1, kTimeoutMs);
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 2);
  const TrialRecord* trace = nullptr;
  for (int row = 0; row < 2; ++row)
    if (w->trialsModel()->record(row).config.model == "unknown") trace = &w->trialsModel()->record(row);
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->config.world_size, 2);
  EXPECT_EQ(trace->config.strategy, config::Strategy::Fsdp);
}

TEST(TraceImportWindow, CancelAndBadFilesAddNothing) {
  QTemporaryDir dir;
  auto w = make_window();
  TraceImportActions* t = w->traceImport();
  // Cancel (the dialog's button) while the import waits behind another job: it never starts.
  // (A cancel while reading stops the read at its next chunk: BackgroundJobs and reader tests.)
  QSignalSpy ended(t, &TraceImportActions::traceImportEnded);
  QSignalSpy failed(w->jobs(), &BackgroundJobs::jobFailed);
  {
    JobBlocker blocker(w->jobs());
    ASSERT_TRUE(t->importTraces(traces("ddp-nw4")));
    ASSERT_NE(t->progressDialog(), nullptr);
    EXPECT_FALSE(t->progressDialog()->isModal());         // the window goes on working meanwhile
    EXPECT_FALSE(t->importTraces(traces("single-nw0")));  // one import at a time
    EXPECT_TRUE(w->sessionActions()->lastError().contains("Traces are being imported"));
    QPushButton* cancel = t->progressDialog()->findChild<QPushButton*>();
    ASSERT_NE(cancel, nullptr);
    cancel->click();
  }
  TB_WAIT_FOR(ended.size() == 1, kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_EQ(failed.size(), 0);  // a cancel is no failure
  EXPECT_TRUE(w->statusBar()->currentMessage().contains("Import cancelled: nothing was added"))
      << w->statusBar()->currentMessage().toStdString();
  EXPECT_FALSE(t->isImporting());

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
  EXPECT_TRUE(text.contains("(imported trace, 2 ranks) (2 torch.profiler traces) was not imported")) << text.toStdString();
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
  EXPECT_TRUE(w->sessionActions()->lastError().contains(
      "other.json is none of the kinds of file Tunebench imports (Event logs, Tunebench reports, torch.profiler traces)"))
      << w->sessionActions()->lastError().toStdString();
  EXPECT_FALSE(w->sessionActions()->importFiles({dir.filePath("missing.pt.trace.json")}));
  EXPECT_TRUE(w->sessionActions()->lastError().contains("missing.pt.trace.json cannot be read"));
  wait_jobs(*w);
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  const auto reader =
      store::SessionStore::open(w->session()->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_TRUE(reader.list_trials().empty());
}

// Issue 44: a CNN trace given its samples per step has a throughput in the trial view, in
// samples/s (the analysis' samples_per_s), where it said "unknown" for want of tokens.
TEST(TraceImportWindow, ACnnTraceGivenItsSamplesPerStepPlotsSamplesPerSecond) {
  auto w = make_window();
  ASSERT_TRUE(import_and_wait(*w, traces("cnn-b8"), {"samples_per_step=8"}));
  wait_jobs(*w);
  const TrialRecord r = w->trialsModel()->record(0);
  ASSERT_EQ(w->viewer()->shown(), r.id);
  w->liveView()->replotNow();
  StepTimePlot* steps = w->liveView()->stepTime();
  EXPECT_EQ(steps->throughputUnit(), QStringLiteral("samples/s"));
  EXPECT_EQ(steps->throughputPoints(), r.step);
  auto* unknown = steps->findChild<QLabel*>(QStringLiteral("throughputNote"));
  ASSERT_NE(unknown, nullptr);
  EXPECT_TRUE(unknown->isHidden());
  const auto loaded = w->session()->loadTrial(r.id);
  ASSERT_TRUE(loaded);
  const auto m = analysis::analyze(loaded->log);
  ASSERT_GT(m.samples_per_s_total.n, 0u);
  // The panel is scaled to the points it draws: the analysis' rate lies under its top.
  EXPECT_GE(steps->throughputRect()->axis(QCPAxis::atLeft)->range().upper, m.samples_per_s_total.median);
  // The trials table's throughput cell names its unit, with the analysis' figure.
  EXPECT_EQ(w->trialsModel()->index(0, TrialsModel::TokensPerS).data().toString(),
            QStringLiteral("%1 samples/s").arg(QLocale().toString(std::round(m.samples_per_s_total.median), 'f', 0)));
}

TEST(TraceImportWindow, SettingsDialogFillsInUnknownSettings) {
  auto w = make_window();
  ASSERT_TRUE(import_and_wait(*w, traces("single-nw4"), {"micro_batch=8"}));
  const QString id = w->trialsModel()->record(0).id;
  // Trial > Settings… and the table's context menu offer it for the one selected trial; it opens
  // without blocking (a nested exec() would not return here).
  QAction* action = w->traceImport()->settingsAction();
  EXPECT_TRUE(w->menu("menuTrial")->actions().contains(action));
  EXPECT_TRUE(w->sessionActions()->contextMenu()->actions().contains(action));
  w->trialsView()->clearSelection();
  EXPECT_FALSE(action->isEnabled());
  w->selectRows({"0"});
  ASSERT_TRUE(action->isEnabled());
  action->trigger();
  KnownSettingsDialog* d = w->traceImport()->settingsDialog();
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->isVisible());
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
  const auto reader =
      store::SessionStore::open(w->session()->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(reader.trial_environment(w->session()->storeId(id)).at(0).config["seq_len"], 512);  // the analysis reads
  EXPECT_EQ(w->trialsModel()->record(0).config.seq_len, 512);                                   // the table too

  // A native trial's settings: shown, not editable.
  ASSERT_TRUE(w->sessionActions()->importLog(QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/analysis/forum_single.jsonl")));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 2);
  KnownSettingsDialog* native = w->traceImport()->showSettings(w->trialsModel()->record(1).id);
  ASSERT_NE(native, nullptr);
  EXPECT_FALSE(native->editButton()->isEnabled());
  EXPECT_FALSE(native->field("micro_batch")->text().isEmpty());
  native->close();
}
