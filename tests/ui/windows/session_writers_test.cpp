// One session written by several processes at once (issue 43): this test's window, the real
// tunebench-cli and real tunebench windows run trials into the same file together, in both orders,
// and the window switches sessions while another process still writes the old one. Every trial of
// every writer must end complete, readable from each process, and the file must pass SQLite's
// integrity_check. The workers are the fake worker: the processes that write are the real ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include <QProcess>
#include <QTemporaryDir>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/session_store.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

QProcessEnvironment env_with_step_ms(int stepMs) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.insert(QStringLiteral("TUNEBENCH_FAKE_STEP_MS"), QString::number(stepMs));
  return env;
}

// `tunebench-cli run SESSION` of the fake worker, `steps` steps on `ranks` ranks; started, not waited for.
std::unique_ptr<QProcess> start_cli_run(const QString& session, const QString& name, int steps, int ranks,
                                        int stepMs) {
  auto p = std::make_unique<QProcess>();
  p->setProcessEnvironment(env_with_step_ms(stepMs));
  p->setProgram(QStringLiteral(TUNEBENCH_CLI));
  QStringList args = {"run", session, "--preset", ranks > 1 ? "cpu-tiny-ddp" : "cpu-tiny", "--worker",
                      TUNEBENCH_FAKE_WORKER, "--name", name, "--set", QStringLiteral("steps=%1").arg(steps),
                      "--set", "warmup=1"};
  p->setArguments(args);
  p->setProcessChannelMode(QProcess::MergedChannels);
  p->start();
  EXPECT_TRUE(p->waitForStarted(10000));
  return p;
}

// Waits for a started process; its exit code (-1 when it did not end in time), output on failure.
int finish(QProcess& p, int timeoutMs = 120000) {
  if (p.state() != QProcess::NotRunning && !p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished(5000);
    ADD_FAILURE() << p.program().toStdString() << " did not end in time";
    return -1;
  }
  if (p.exitCode() != 0) ADD_FAILURE() << p.program().toStdString() << ": " << p.readAll().toStdString();
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

int cli_run(const QString& session, const QString& name, int steps, int ranks = 1, int stepMs = 20) {
  auto p = start_cli_run(session, name, steps, ranks, stepMs);
  return finish(*p);
}

// `tunebench-cli list SESSION` from another process: its exit code and output.
std::pair<int, QString> cli_list(const QString& session) {
  QProcess p;
  p.setProgram(QStringLiteral(TUNEBENCH_CLI));
  p.setArguments({"list", session});
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start();
  if (!p.waitForFinished(60000)) return {-1, {}};
  return {p.exitCode(), QString::fromUtf8(p.readAll())};
}

// A real tunebench window that opens `session`, runs the preset's trial and quits once it is saved.
std::unique_ptr<QProcess> start_gui_run(const QString& session, const QString& name, const QString& png, int steps,
                                        int stepMs) {
  auto p = std::make_unique<QProcess>();
  p->setProcessEnvironment(env_with_step_ms(stepMs));
  p->setProgram(QStringLiteral(TUNEBENCH_GUI));
  const QString config = png + QStringLiteral(".json");
  {
    config::TrialConfig c = quick_cpu_trial(name.toUtf8().constData(), steps);
    QFile f(config);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(config::to_json(c).dump()));
  }
  p->setArguments({"--no-restore", "--open", session, "--worker", TUNEBENCH_FAKE_WORKER, "--config", config, "--run",
                   "--screenshot", png, "--screenshot-after", "finished"});
  p->setProcessChannelMode(QProcess::MergedChannels);
  p->start();
  EXPECT_TRUE(p->waitForStarted(10000));
  return p;
}

// What every process must agree on at the end: trial name -> (status, step records).
struct Expected {
  QString name;
  qint64 step_records;
};

// Checks the file from this process (a fresh connection), from another process (tunebench-cli
// list) and from the window (its table, and each trial loaded), then SQLite's integrity_check.
void expect_all_complete(MainWindow& w, const QString& session, const std::vector<Expected>& trials) {
  const auto s = store::SessionStore::open(session.toStdString(), {store::SessionStore::Mode::ReadOnly});
  const auto stored = s.list_trials();
  ASSERT_EQ(stored.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) {
    const auto it = std::find_if(stored.begin(), stored.end(),
                                 [&](const store::TrialInfo& t) { return t.name == trials[i].name.toStdString(); });
    ASSERT_NE(it, stored.end()) << trials[i].name.toStdString();
    EXPECT_EQ(it->status, protocol::TrialStatus::Done) << it->name << ": " << it->exit_reason;
    EXPECT_EQ(it->step_count, trials[i].step_records) << it->name;
    size_t loaded = 0;
    for (const auto& [rank, log] : s.load_trial(it->id).log.ranks) loaded += log.steps.size();
    EXPECT_EQ(loaded, size_t(trials[i].step_records)) << it->name;
  }
  const auto [code, listed] = cli_list(session);
  EXPECT_EQ(code, 0) << listed.toStdString();
  EXPECT_EQ(listed.count(QStringLiteral(" done ")), int(trials.size())) << listed.toStdString();

  if (w.session()->path() == session) {
    // The window notices the other writers' last changes within a second.
    auto all_done = [&w, n = int(trials.size())] {
      if (w.trialsModel()->rowCount() != n) return false;
      for (int row = 0; row < n; ++row)
        if (w.trialsModel()->record(row).status != protocol::TrialStatus::Done) return false;
      return true;
    };
    TB_WAIT_FOR(all_done(), kTimeoutMs);
    wait_jobs(w);
    for (int row = 0; row < w.trialsModel()->rowCount(); ++row) {
      const TrialRecord r = w.trialsModel()->record(row);
      const auto loaded = w.session()->loadTrial(r.id);
      ASSERT_TRUE(loaded) << r.config.name << ": " << w.session()->errorString().toStdString();
      EXPECT_FALSE(loaded->log.ranks.empty()) << r.config.name;
    }
  }
  SQLite::Database db(session.toStdString(), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
}

// Whether the named trials ran at the same time (each started before any of them ended), so the
// writers really overlapped.
bool ran_together(const QString& session, const QStringList& names) {
  const auto s = store::SessionStore::open(session.toStdString(), {store::SessionStore::Mode::ReadOnly});
  int64_t last_start = 0, first_end = INT64_MAX;
  for (const auto& t : s.list_trials())
    if (names.contains(QString::fromStdString(t.name))) {
      last_start = std::max(last_start, t.start_us.value_or(INT64_MAX));
      first_end = std::min(first_end, t.end_us.value_or(0));
    }
  return last_start < first_end;
}

// The window opens `session` (made by one CLI trial, as in the issue) and waits for it.
std::unique_ptr<MainWindow> window_on(const QString& session) {
  auto w = make_window();
  EXPECT_TRUE(w->sessionActions()->openSession(session));
  wait_jobs(*w);
  EXPECT_EQ(w->session()->path(), session);
  return w;
}

}  // namespace

TEST(SessionWriters, TheWindowAndTheCommandLineWriteOneSessionAtOnce) {
  QTemporaryDir dir;
  const QString session = dir.filePath("s.tbsession");
  ASSERT_EQ(cli_run(session, "cli first", 3), 0);
  auto w = window_on(session);

  // The window runs first; two command-line trials start and end while it records.
  qputenv("TUNEBENCH_FAKE_STEP_MS", "100");
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  w->form()->setConfig(quick_cpu_trial("window long", 30));
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(w->session()->liveCommitted() > 0, kTimeoutMs);
  EXPECT_EQ(cli_run(session, "cli during window 1", 6), 0);
  EXPECT_EQ(cli_run(session, "cli during window 2", 6, 2), 0);
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);

  // The command line runs first; the window runs a trial while it records.
  auto longCli = start_cli_run(session, "cli long", 40, 1, 60);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == 5, kTimeoutMs);  // the window sees it start
  qputenv("TUNEBENCH_FAKE_STEP_MS", "20");
  run_and_wait(*w, quick_cpu_trial("window during cli", 6));
  EXPECT_EQ(finish(*longCli), 0);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");

  // The window still writes its session after all that.
  run_and_wait(*w, quick_cpu_trial("window after", 3));
  EXPECT_TRUE(ran_together(session, {"window long", "cli during window 1"}));
  EXPECT_TRUE(ran_together(session, {"window long", "cli during window 2"}));
  EXPECT_TRUE(ran_together(session, {"cli long", "window during cli"}));
  expect_all_complete(*w, session,
                      {{"cli first", 3}, {"window long", 30}, {"cli during window 1", 6}, {"cli during window 2", 12},
                       {"cli long", 40}, {"window during cli", 6}, {"window after", 3}});
}

TEST(SessionWriters, TwoWindowsWriteOneSessionAtOnce) {
  QTemporaryDir dir;
  const QString session = dir.filePath("s.tbsession");
  ASSERT_EQ(cli_run(session, "cli first", 3), 0);
  auto w = window_on(session);
  // Two more windows, real tunebench processes, run a trial each while this one runs its own.
  auto other1 = start_gui_run(session, "other window 1", dir.filePath("other1.png"), 30, 80);
  auto other2 = start_gui_run(session, "other window 2", dir.filePath("other2.png"), 20, 120);
  qputenv("TUNEBENCH_FAKE_STEP_MS", "60");
  run_and_wait(*w, quick_cpu_trial("this window", 80));
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
  EXPECT_EQ(finish(*other1), 0);
  EXPECT_EQ(finish(*other2), 0);
  EXPECT_TRUE(ran_together(session, {"this window", "other window 1", "other window 2"}));
  expect_all_complete(*w, session, {{"cli first", 3}, {"this window", 80}, {"other window 1", 30}, {"other window 2", 20}});
}

TEST(SessionWriters, SwitchingSessionsWhileAnotherProcessStillWritesTheOldOne) {
  QTemporaryDir dir;
  const QString first = dir.filePath("first.tbsession"), second = dir.filePath("second.tbsession");
  ASSERT_EQ(cli_run(first, "cli first", 3), 0);
  ASSERT_EQ(cli_run(second, "cli second", 3), 0);
  auto w = window_on(first);
  auto longCli = start_cli_run(first, "cli long", 60, 2, 80);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == 2, kTimeoutMs);  // the window sees it start
  // Away and back again while it writes, running a trial in each.
  ASSERT_TRUE(w->sessionActions()->openSession(second));
  wait_jobs(*w);
  ASSERT_EQ(w->session()->path(), second);
  run_and_wait(*w, quick_cpu_trial("window in second", 4));
  ASSERT_TRUE(w->sessionActions()->openSession(first));
  wait_jobs(*w);
  ASSERT_EQ(w->session()->path(), first);
  run_and_wait(*w, quick_cpu_trial("window in first", 4));
  EXPECT_EQ(finish(*longCli), 0);
  EXPECT_TRUE(ran_together(first, {"cli long", "window in first"}));
  expect_all_complete(*w, first, {{"cli first", 3}, {"cli long", 120}, {"window in first", 4}});
  expect_all_complete(*w, second, {{"cli second", 3}, {"window in second", 4}});
}
