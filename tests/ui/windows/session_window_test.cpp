// The window's session: live trials land in the .tbsession while they run, the File and Trial
// menus' work (open, save as, import, export, rename, annotate, delete, run again), drag and drop,
// a foreign session's config shown before it runs, and a GUI killed mid-run (SIGKILL).
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <csignal>
#include <fstream>

#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QUrl>

#include <nlohmann/json.hpp>

#include "core/store/session_store.h"
#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/start_page.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
config::TrialConfig fake_config(int world, int steps) {
  config::TrialConfig c = config::trial_presets().at(world > 1 ? 1 : 0).config;  // cpu-tiny(-ddp)
  c.world_size = world;
  c.strategy = world > 1 ? config::Strategy::Ddp : config::Strategy::Single;
  c.steps = steps;
  c.warmup = 1;
  c.name = world > 1 ? "ddp" : "single";
  return c;
}

int64_t stored_steps(const QString& path, int64_t trial) {
  const auto s = store::SessionStore::open(path.toStdString(), {store::SessionStore::Mode::ReadOnly});
  return s.trial(trial).step_count;
}

// Opening, importing, exporting, Save As and deleting are background jobs: wait for them.
void select_row(MainWindow& w, int row) {
  w.trialsView()->selectRow(row);
  ASSERT_EQ(w.sessionActions()->selectedTrialIds().size(), 1);
}

// Clicks `button` of the next modal dialog, or of the launch preview (not modal), once it is shown.
void answer_next_dialog(QDialogButtonBox::ButtonRole role, QString* text = nullptr) {
  QTimer::singleShot(200, [role, text] {
    QWidget* modal = QApplication::activeModalWidget();
    for (QWidget* top : QApplication::topLevelWidgets())
      if (!modal && qobject_cast<LaunchPreviewDialog*>(top) && top->isVisible()) modal = top;
    if (!modal) return answer_next_dialog(role, text);
    if (text)
      if (auto* edit = modal->findChild<QPlainTextEdit*>()) *text = edit->toPlainText();
    for (QAbstractButton* b : modal->findChild<QDialogButtonBox*>()->buttons())
      if (modal->findChild<QDialogButtonBox*>()->buttonRole(b) == role) return b->click();
  });
}
}  // namespace

TEST(SessionWindow, ALiveTrialIsWrittenToTheSessionAsItRuns) {
  auto w = make_window();
  SessionController* s = w->session();
  ASSERT_TRUE(s->hasSession());
  EXPECT_TRUE(w->isStartPageShown());  // empty session
  qputenv("TUNEBENCH_FAKE_STEP_MS", "100");
  w->form()->setConfig(fake_config(2, 100000));
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  EXPECT_FALSE(w->isStartPageShown());
  const int64_t id = s->storeId(w->trialsModel()->record(0).id);
  ASSERT_GT(id, 0);
  // While it runs, another connection (read-only, like a second process) sees committed steps.
  TB_WAIT_FOR(s->liveCommitted() > 0 && stored_steps(s->path(), id) >= 4, kTimeoutMs);
  {
    const auto reader = store::SessionStore::open(s->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(reader.trial(id).status, protocol::TrialStatus::Running);
  }
  w->stopTrial();
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
  const auto reader = store::SessionStore::open(s->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(reader.trial(id).status, protocol::TrialStatus::Stopped);
  EXPECT_FALSE(reader.trial(id).exit_reason.empty());

  // A trial that runs to the end: done, every step of both ranks stored.
  run_and_wait(*w, fake_config(2, 6));
  const int64_t id2 = s->storeId(w->trialsModel()->record(1).id);
  const auto after = store::SessionStore::open(s->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(after.trial(id2).status, protocol::TrialStatus::Done);
  EXPECT_EQ(after.trial(id2).step_count, 12);
  EXPECT_EQ(after.trial_summaries(id2).size(), 2u);
}

TEST(SessionWindow, ACrashedTrialIsStoredFailedWithItsReason) {
  FakeMode crash("crash", 1, 2);
  auto w = make_window();
  run_and_wait(*w, fake_config(2, 50));
  const auto t = w->session()->trialInfo(w->trialsModel()->record(0).id);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->status, protocol::TrialStatus::Failed);
  EXPECT_NE(t->exit_reason.find("SIGSEGV"), std::string::npos) << t->exit_reason;
}

TEST(SessionWindow, OpenSaveAsAndReopenShowTheSameTrials) {
  QTemporaryDir dir;
  auto w = make_window();
  run_and_wait(*w, fake_config(1, 3));
  const QString copy = dir.filePath("copy.tbsession");
  ASSERT_TRUE(w->sessionActions()->saveSessionAs(copy));
  wait_jobs(*w);  // the copy, then opening it
  EXPECT_EQ(w->session()->path(), copy);
  EXPECT_EQ(w->sessionActions()->recentSessions().value(0), copy);

  auto w2 = make_window();
  ASSERT_TRUE(w2->sessionActions()->openSession(copy));
  wait_jobs(*w2);
  ASSERT_EQ(w2->trialsModel()->rowCount(), 1);
  const TrialRecord& r = w2->trialsModel()->record(0);
  EXPECT_EQ(r.status, protocol::TrialStatus::Done);
  EXPECT_EQ(r.config.name, "single");
  EXPECT_EQ(r.step, 3);
  // No step-time median here: the fake worker's done event carries an empty summary (real-worker tests check it).
  EXPECT_TRUE(w2->windowTitle().contains("copy.tbsession"));

  // New session: empty table, start page.
  ASSERT_TRUE(w2->sessionActions()->newSession(dir.filePath("fresh.tbsession")));
  EXPECT_EQ(w2->trialsModel()->rowCount(), 0);
  EXPECT_TRUE(w2->isStartPageShown());
  EXPECT_EQ(w2->sessionActions()->recentSessions().size(), 2);
}

TEST(SessionWindow, ACorruptOrForeignFileChangesNothingAndSaysWhy) {
  QTemporaryDir dir;
  auto w = make_window();
  run_and_wait(*w, fake_config(1, 2));
  const QString before = w->session()->path();
  const QString junk = dir.filePath("junk.tbsession");
  {
    QFile f(junk);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(4096, 'x'));
  }
  w->sessionActions()->openSession(junk);  // checked in the background, refused there
  wait_jobs(*w);
  EXPECT_EQ(w->session()->path(), before);
  EXPECT_EQ(w->trialsModel()->rowCount(), 1);
  ASSERT_NE(w->sessionActions()->lastMessageBox(), nullptr);
  EXPECT_TRUE(w->sessionActions()->lastMessageBox()->text().contains("not an SQLite database"))
      << w->sessionActions()->lastMessageBox()->text().toStdString();
  EXPECT_TRUE(w->sessionActions()->lastMessageBox()->text().contains("Nothing was changed"));
  QFile check(junk);
  ASSERT_TRUE(check.open(QIODevice::ReadOnly));
  EXPECT_EQ(check.readAll(), QByteArray(4096, 'x'));  // the file itself is untouched too
  // An event log that is not one: refused with the store's sentence, the session unchanged.
  w->sessionActions()->importLog(junk);
  wait_jobs(*w);
  EXPECT_EQ(w->trialsModel()->rowCount(), 1);
  ASSERT_NE(w->sessionActions()->lastMessageBox(), nullptr);
  EXPECT_TRUE(w->sessionActions()->lastMessageBox()->text().contains("was not imported"))
      << w->sessionActions()->lastMessageBox()->text().toStdString();
}

TEST(SessionWindow, RenameAnnotateDeleteAndExport) {
  QTemporaryDir dir;
  auto w = make_window();
  run_and_wait(*w, fake_config(2, 4));
  const QString id = w->trialsModel()->record(0).id;
  SessionController* s = w->session();
  ASSERT_TRUE(s->renameTrial(id, "baseline; DROP TABLE trials"));
  ASSERT_TRUE(s->annotateTrial(id, "first try", {"ddp", " cpu "}));
  auto info = s->trialInfo(id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->name, "baseline; DROP TABLE trials");
  EXPECT_EQ(info->notes, "first try");
  EXPECT_EQ(info->tags, (std::vector<std::string>{"cpu", "ddp"}));
  EXPECT_EQ(w->trialsModel()->data(w->trialsModel()->index(0, TrialsModel::Name), Qt::DisplayRole).toString(),
            "baseline; DROP TABLE trials");

  select_row(*w, 0);
  const QStringList ids = w->sessionActions()->selectedTrialIds();
  ASSERT_TRUE(w->sessionActions()->exportTrials(ids, dir.filePath("t.csv")));
  ASSERT_TRUE(w->sessionActions()->exportTrials(ids, dir.filePath("t.json")));
  ASSERT_TRUE(w->sessionActions()->exportSummariesCsv(ids, dir.filePath("s.csv")));
  ASSERT_TRUE(w->sessionActions()->exportChromeTrace(ids, dir.filePath("trace.json")));
  wait_jobs(*w);
  std::ifstream csv(dir.filePath("t.csv").toStdString());
  int lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_EQ(lines, 1 + 8);  // header + 4 steps x 2 ranks
  std::ifstream json(dir.filePath("t.json").toStdString());
  EXPECT_EQ(nlohmann::json::parse(json)["trials"].size(), 1u);
  std::ifstream trace(dir.filePath("trace.json").toStdString());
  const auto t = nlohmann::json::parse(trace);
  EXPECT_GT(t["traceEvents"].size(), 8u);

  // Plots: PNG, PDF and SVG.
  for (const char* ext : {"png", "pdf", "svg"}) {
    const QStringList written = w->exportPlots(dir.filePath(QStringLiteral("plot.%1").arg(ext)));
    ASSERT_EQ(written.size(), 3) << ext;
    for (const QString& f : written) EXPECT_GT(QFileInfo(f).size(), 500) << f.toStdString();
  }
  QFile svg(dir.filePath("plot.svg"));
  ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
  EXPECT_TRUE(svg.readAll().contains("<svg"));

  ASSERT_TRUE(s->deleteTrial(id));
  wait_jobs(*w);
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  const auto reader = store::SessionStore::open(s->path().toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_TRUE(reader.list_trials().empty());
}

TEST(SessionWindow, ImportAndDropAnEventLog) {
  auto w = make_window();
  const QString log = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl");
  ASSERT_TRUE(w->sessionActions()->importLog(log));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_GT(w->trialsModel()->record(0).step, 0);
  EXPECT_EQ(w->trialsModel()->record(0).config.world_size, 2);

  // Dropping a .jsonl onto the window imports it too.
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(log)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  enter.setAccepted(false);  // events start accepted; the window must accept it itself
  QApplication::sendEvent(w.get(), &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w.get(), &drop);
  wait_jobs(*w);
  EXPECT_EQ(w->trialsModel()->rowCount(), 2);
}

TEST(SessionWindow, DroppingASessionFileOpensIt) {
  QTemporaryDir dir;
  const QString path = dir.filePath("dropped.tbsession");
  {
    auto s = store::SessionStore::create(path.toStdString(), "dropped");
    s.add_trial("queued one", config::to_json(fake_config(1, 2)));
  }
  auto w = make_window();
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  // Qt delivers a drop only to the target the drag entered: enter first, as a real drag does.
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w.get(), &enter);
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w.get(), &drop);
  wait_jobs(*w);
  EXPECT_EQ(w->session()->path(), path);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_EQ(w->trialsModel()->record(0).status, protocol::TrialStatus::Queued);
}

TEST(SessionWindow, AConfigFromAForeignSessionIsShownBeforeItRuns) {
  QTemporaryDir dir;
  const QString path = dir.filePath("shared.tbsession");
  {
    auto s = store::SessionStore::create(path.toStdString(), "from a forum");
    config::TrialConfig c = fake_config(2, 3);
    c.nccl_env = {{"NCCL_P2P_DISABLE", "1"}};
    s.add_trial("theirs", config::to_json(c), protocol::TrialStatus::Done);
  }
  auto w = make_window();
  ASSERT_TRUE(w->sessionActions()->openSession(path));
  wait_jobs(*w);
  ASSERT_TRUE(w->session()->isForeign());
  select_row(*w, 0);
  ASSERT_TRUE(w->sessionActions()->rerunWithChanges(w->sessionActions()->selectedTrialIds()[0]));
  EXPECT_EQ(w->form()->config().name, "theirs (again)");
  EXPECT_EQ(w->form()->config().world_size, 2);
  ASSERT_TRUE(w->form()->origin().fromSession);

  // Cancel: nothing runs, nothing is queued. The preview does not block (it is not modal).
  QString shown;
  answer_next_dialog(QDialogButtonBox::RejectRole, &shown);
  EXPECT_FALSE(w->runTrial());
  EXPECT_NE(w->launcher()->pendingPreview(), nullptr);
  TB_WAIT_FOR(w->launcher()->pendingPreview() == nullptr, kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_TRUE(shown.contains("--config '$TMP/trial.json'")) << shown.toStdString();  // as a shell reads it
  EXPECT_TRUE(shown.contains("NCCL_P2P_DISABLE=1")) << shown.toStdString();
  EXPECT_TRUE(shown.contains("Environment of rank 1")) << shown.toStdString();
  EXPECT_TRUE(shown.contains(TUNEBENCH_FAKE_WORKER)) << shown.toStdString();

  // Accept: it runs, and the new trial records where its config came from.
  answer_next_dialog(QDialogButtonBox::AcceptRole);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  w->runTrial();
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  const auto info = w->session()->trialInfo(w->trialsModel()->record(1).id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->source, "duplicate of trial 1");
  EXPECT_EQ(info->status, protocol::TrialStatus::Done);
  EXPECT_FALSE(w->form()->origin().fromSession);  // asked once per loaded config
}

TEST(SessionWindow, TheStartPageListsAndOpensExamplesAsACopy) {
  QTemporaryDir dir;
  const QString example = dir.filePath("example.tbsession");
  {
    auto s = store::SessionStore::create(example.toStdString(), "An example");
    s.set_notes("Made for this test.");
    s.add_trial("one", config::to_json(fake_config(1, 2)), protocol::TrialStatus::Done);
  }
  const auto examples = list_examples(dir.path());
  ASSERT_EQ(examples.size(), 1);
  EXPECT_EQ(examples[0].name, "An example");
  EXPECT_EQ(examples[0].description, "Made for this test.");
  EXPECT_EQ(examples[0].trials, 1);

  auto w = make_window();
  StartPage* page = w->startPage();
  page->setExamples(examples);
  ASSERT_TRUE(w->sessionActions()->openExample(example)) << w->session()->errorString().toStdString();
  wait_jobs(*w);
  EXPECT_NE(w->session()->path(), example);  // a copy
  EXPECT_TRUE(w->session()->isForeign());
  EXPECT_EQ(w->trialsModel()->rowCount(), 1);
  EXPECT_FALSE(w->isStartPageShown());
  ASSERT_TRUE(w->session()->renameTrial(w->trialsModel()->record(0).id, "edited"));
  const auto original = store::SessionStore::open(example.toStdString(), {store::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(original.list_trials().at(0).name, "one");  // the shipped file stays as it was
  const QString copy = w->session()->path();
  w.reset();  // closes the copy, so SQLite removes its side files
  QFile::remove(copy);
}

// A session deleted while it was open can leave `name.tbsession-wal` behind in the user's folder.
// A new copy of an example must not take that name: SQLite would replay the stale log into it.
TEST(SessionWindow, AnExampleCopyNeverLandsOnALeftoverWriteAheadLog) {
  QTemporaryDir dir;
  const QString example = dir.filePath("leftover-example.tbsession");
  {
    auto s = store::SessionStore::create(example.toStdString(), "An example");
    s.add_trial("one", config::to_json(fake_config(1, 2)), protocol::TrialStatus::Done);
  }
  auto w = make_window();
  const QString data = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/sessions";
  QDir().mkpath(data);
  const QString taken = data + "/leftover-example.tbsession";
  const QString stale = taken + "-wal";
  QFile::remove(taken);
  QFile::remove(stale);
  {  // a real log of another session under that name, left behind without its database
    auto other = store::SessionStore::create(taken.toStdString(), "Another session");
    for (int i = 0; i < 3; ++i)
      other.add_trial("other", config::to_json(fake_config(1, 2)), protocol::TrialStatus::Done);
    ASSERT_TRUE(QFile::copy(stale, stale + ".kept"));
  }
  ASSERT_TRUE(QFile::remove(taken));
  QFile::remove(stale);
  ASSERT_TRUE(QFile::rename(stale + ".kept", stale));
  ASSERT_TRUE(w->sessionActions()->openExample(example)) << w->session()->errorString().toStdString();
  wait_jobs(*w);
  const QString copy = w->session()->path();
  EXPECT_NE(copy, taken);
  EXPECT_EQ(w->trialsModel()->rowCount(), 1);
  w.reset();
  QFile::remove(copy);
  QFile::remove(stale);
}

TEST(SessionWindow, TheShippedExamplesOpen) {
  const QString dir = examples_dir(QCoreApplication::applicationDirPath());
  if (dir.isEmpty() || list_examples(dir).isEmpty()) GTEST_SKIP() << "no sessions/ folder with examples";
  for (const ExampleSession& e : list_examples(dir)) {
    EXPECT_FALSE(e.description.startsWith("Cannot be opened"))
        << e.path.toStdString() << ": " << e.description.toStdString();
    EXPECT_GT(e.trials, 0) << e.path.toStdString();
  }
}

// Issue 6: a GUI killed with SIGKILL mid-run leaves every committed step in the file, and the
// trial reads as interrupted afterwards. The real tunebench binary runs the fake worker.
TEST(SessionWindow, KillingTheGuiMidRunKeepsTheFinishedSteps) {
  QTemporaryDir dir;
  const QString session = dir.filePath("killed.tbsession");
  QProcess gui;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  env.insert("TUNEBENCH_FAKE_STEP_MS", "500");  // the preset's 11 steps take 5.5 s: killed well before the end
  gui.setProcessEnvironment(env);
  gui.setProgram(QStringLiteral(TUNEBENCH_GUI));
  gui.setArguments(
      {"--no-restore", "--open", session, "--worker", TUNEBENCH_FAKE_WORKER, "--preset", "cpu-tiny-ddp", "--run"});
  gui.start();
  ASSERT_TRUE(gui.waitForStarted(10000));
  int64_t seen = 0;
  auto steps_in_file = [&] {
    try {
      const auto s = store::SessionStore::open(session.toStdString(), {store::SessionStore::Mode::ReadOnly});
      const auto trials = s.list_trials();
      seen = trials.empty() ? 0 : trials[0].step_count;
    } catch (const std::exception&) {
      seen = 0;  // not created yet
    }
    return seen >= 6;
  };
  TB_WAIT_FOR(steps_in_file(), kTimeoutMs);
  ::kill(pid_t(gui.processId()), SIGKILL);
  ASSERT_TRUE(gui.waitForFinished(10000));
  auto reopened = store::SessionStore::open(session.toStdString());  // read-write: marks orphans
  const auto trials = reopened.list_trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].status, protocol::TrialStatus::Interrupted);
  EXPECT_GE(trials[0].step_count, seen);
  EXPECT_EQ(reopened.load_trial(trials[0].id).log.ranks.size(), 2u);
}

TEST(SessionWindow, ALoadThatFailsStillAnswersAndSaysWhichTrial) {
  // A trial removed from the file by another program after it was listed: the comparison (or the
  // predictions) still get their answer, the other trial loaded, and the user reads which trial
  // failed, told apart by the job's kind (not by parsing its title).
  auto w = make_window();
  const QString log = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl");
  ASSERT_TRUE(w->sessionActions()->importLog(log));
  ASSERT_TRUE(w->sessionActions()->importLog(log));
  wait_jobs(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 2);
  const QStringList ids = {w->trialsModel()->record(0).id, w->trialsModel()->record(1).id};
  {
    auto other = store::SessionStore::open(w->session()->path().toStdString());
    other.delete_trial(w->session()->storeId(ids[1]));
  }
  QSignalSpy failed(w->jobs(), &BackgroundJobs::jobFailed);
  std::optional<std::vector<std::optional<protocol::TrialLog>>> answer;
  w->session()->loadTrialLogs(ids, [&](std::vector<std::optional<protocol::TrialLog>> logs) { answer = std::move(logs); });
  wait_jobs(*w);
  ASSERT_TRUE(answer.has_value()) << "the caller was never answered";
  ASSERT_EQ(answer->size(), 2u);
  EXPECT_TRUE((*answer)[0].has_value());
  EXPECT_FALSE((*answer)[1].has_value());
  ASSERT_EQ(failed.size(), 1);
  EXPECT_EQ(failed.at(0).at(0).value<JobFailure>().kind, JobKind::LoadTrial);
  EXPECT_TRUE(w->sessionActions()->lastError().contains(QStringLiteral("Could not load one of 2 trials")))
      << w->sessionActions()->lastError().toStdString();
}

// --screenshot-after finished quits once the --run trial has ended and is saved (with the fake
// worker here; the installed programs' test does it with the real one); values it cannot wait
// for are refused with the option named.
TEST(SessionWindow, ScreenshotAfterTheRunFinishedSavesTheTrialThenQuits) {
  QTemporaryDir dir;
  const QString session = dir.filePath("shot.tbsession");
  const QString png = dir.filePath("shot.png");
  auto run_gui = [&](const QStringList& args, QString* err) {
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    gui.setProcessEnvironment(env);
    gui.setProgram(QStringLiteral(TUNEBENCH_GUI));
    gui.setArguments(QStringList{"--no-restore", "--worker", TUNEBENCH_FAKE_WORKER, "--screenshot", png} + args);
    gui.start();
    EXPECT_TRUE(gui.waitForFinished(120000));
    *err = QString::fromUtf8(gui.readAllStandardError());
    return gui.exitCode();
  };
  QString err;
  EXPECT_EQ(run_gui({"--open", session, "--preset", "cpu-tiny", "--run", "--screenshot-after", "finished"}, &err), 0)
      << err.toStdString();
  EXPECT_TRUE(QFileInfo(png).size() > 0);
  const auto s = store::SessionStore::open(session.toStdString(), {store::SessionStore::Mode::ReadOnly});
  const auto trials = s.list_trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].status, protocol::TrialStatus::Done);

  // A trial the form refuses never finishes: the picture is taken at once, and the status says so.
  const QString bad = dir.filePath("refused.json");
  {
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"strategy": "ddp", "world_size": 2, "optimizer_overlap": true})");
  }
  QFile::remove(png);
  EXPECT_EQ(run_gui({"--open", dir.filePath("refused.tbsession"), "--config", bad, "--run", "--screenshot-after",
                     "finished"},
                    &err),
            1)
      << err.toStdString();
  EXPECT_TRUE(err.contains("did not start")) << err.toStdString();
  EXPECT_TRUE(QFileInfo(png).size() > 0);

  EXPECT_EQ(run_gui({"--screenshot-after", "finished"}, &err), 2);
  EXPECT_TRUE(err.contains("needs --run")) << err.toStdString();
  EXPECT_EQ(run_gui({"--screenshot-after", "soon"}, &err), 2);
  EXPECT_TRUE(err.contains("milliseconds or 'finished'")) << err.toStdString();
}

// Issue 43: `tunebench --open damaged.tbsession --run` ran the trial into the throw-away session
// the window held, behind the error box. Now nothing runs, the exit status says so, and the
// damaged file is left as it was.
TEST(SessionWindow, RunWithASessionThatCannotBeOpenedRunsNothing) {
  QTemporaryDir dir;
  const QString damaged = dir.filePath("damaged.tbsession");
  const QByteArray bytes = QByteArray("SQLite format 3\0", 16) + QByteArray(4080, 'x');
  {
    QFile f(damaged);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(bytes);
  }
  QProcess gui;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  gui.setProcessEnvironment(env);
  gui.setProgram(QStringLiteral(TUNEBENCH_GUI));
  gui.setArguments({"--no-restore", "--open", damaged, "--worker", TUNEBENCH_FAKE_WORKER, "--preset", "cpu-tiny",
                    "--run", "--screenshot", dir.filePath("shot.png"), "--screenshot-after", "finished"});
  gui.start();
  ASSERT_TRUE(gui.waitForFinished(60000));
  const QString err = QString::fromUtf8(gui.readAllStandardError());
  EXPECT_EQ(gui.exitCode(), 1) << err.toStdString();
  EXPECT_TRUE(err.contains("was not opened")) << err.toStdString();
  QFile f(damaged);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_EQ(f.readAll(), bytes);
}
