// The status bar and the log say what is true now and the trials table reads
// without sideways scrolling, each written before its fix: "idle" was drawn over the
// session's message at start, "Opening x…" stayed after a failed open, the previous session's
// "… finished" stayed after opening another, internal trial ids were shown, and the log kept the
// old session's lines.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
// Everything the status bar shows now: its message and every visible label's text.
QStringList status_texts(MainWindow& w) {
  QStringList out;
  if (!w.statusBar()->currentMessage().isEmpty()) out << w.statusBar()->currentMessage();
  for (QLabel* l : w.statusBar()->findChildren<QLabel*>())
    if (l->isVisible() && !l->text().isEmpty()) out << l->text();
  return out;
}
}  // namespace

TEST(StatusBar, NothingIsDrawnOverTheSessionsMessageAtStart) {
  QTemporaryDir dir;
  MainWindow::Options o;
  o.workerProgram = QStringLiteral(TUNEBENCH_FAKE_WORKER);
  o.useSettings = false;
  o.detectDevices = false;
  o.devices = cpu_machine();
  o.sessionPath = dir.filePath(QStringLiteral("start.tbsession"));  // made at once: its message comes first
  MainWindow w(o);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  const QString message = w.statusBar()->currentMessage();
  ASSERT_FALSE(message.isEmpty());
  // The message is painted from the left edge; no label may share that strip.
  const int messageRight = w.statusBar()->fontMetrics().horizontalAdvance(message) + 8;
  for (QLabel* l : w.statusBar()->findChildren<QLabel*>()) {
    if (!l->isVisible() || l->text().isEmpty()) continue;
    // In the status bar's coordinates: the run's and the jobs' labels sit inside their own parts.
    EXPECT_GT(l->mapTo(w.statusBar(), QPoint(0, 0)).x(), messageRight)
        << "\"" << l->text().toStdString() << "\" drawn over \"" << message.toStdString() << "\"";
  }
}

TEST(StatusBar, AFailedOpenDoesNotStillSayOpening) {
  QTemporaryDir dir;
  const QString bad = dir.filePath(QStringLiteral("bad.tbsession"));
  {
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("not a session at all");
  }
  auto w = make_window();
  w->sessionActions()->openSession(bad);
  TB_WAIT_FOR(w->jobs()->waitForIdle(kTimeoutMs), kTimeoutMs);
  QTest::qWait(50);
  for (const QString& t : status_texts(*w)) EXPECT_FALSE(t.startsWith(QStringLiteral("Opening"))) << t.toStdString();
}

TEST(StatusBar, AnotherSessionClearsTheLastRunAndTheLog) {
  QTemporaryDir dir;
  auto w = make_window();
  run_and_wait(*w, quick_cpu_trial("first of its session", 4));
  const QString id = w->trialsModel()->record(0).id;
  w->logPane()->flush();
  const QStringList before = w->logPane()->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_FALSE(before.isEmpty());
  ASSERT_TRUE(w->sessionActions()->newSession(dir.filePath(QStringLiteral("other.tbsession"))));
  TB_WAIT_FOR(w->jobs()->waitForIdle(kTimeoutMs), kTimeoutMs);
  // Once the new session's message has gone (it times out), what is left is what the user reads.
  w->statusBar()->clearMessage();
  QTest::qWait(20);
  for (const QString& t : status_texts(*w)) {
    EXPECT_FALSE(t.contains(QStringLiteral("finished"))) << t.toStdString();
    EXPECT_FALSE(t.contains(id)) << t.toStdString();
  }
  w->logPane()->flush();
  const QString after = w->logPane()->toPlainText();
  for (const QString& line : before) EXPECT_FALSE(after.contains(line)) << "still in the log: " << line.toStdString();
}

TEST(StatusBar, TrialsAreNamedNotNumbered) {
  auto w = make_window();
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  w->form()->setConfig(quick_cpu_trial("named run", 4));
  ASSERT_TRUE(w->runTrial());
  const QString id = w->trialsModel()->record(0).id;
  bool sawName = false;
  while (finished.isEmpty()) {
    for (const QString& t : status_texts(*w)) {
      EXPECT_FALSE(t.contains(id)) << t.toStdString();
      sawName = sawName || t.contains(QStringLiteral("named run"));
    }
    QTest::qWait(20);
  }
  for (const QString& t : status_texts(*w)) {
    EXPECT_FALSE(t.contains(id)) << t.toStdString();
    sawName = sawName || t.contains(QStringLiteral("named run"));
  }
  EXPECT_TRUE(sawName);
}

TEST(TrialsTable, TheReasonColumnIsReadableWithoutScrollingSideways) {
  // "Reason" was cut to "Re" and the table needed sideways scrolling.
  auto w = make_window();
  w->resize(1400, 900);
  TrialsModel* m = w->trialsModel();
  for (int i = 0; i < 3; ++i) {
    TrialRecord r;
    r.id = QStringLiteral("t%1").arg(i);
    r.config = quick_cpu_trial("a trial with a fairly long descriptive name [bucket_mb=5, micro_batch=8]", 4);
    r.status = protocol::TrialStatus::Failed;
    r.reason = QStringLiteral("rank 1 failed: exit code 4 (watchdog: no progress for 300 s in all-reduce of bucket 3)");
    m->upsert(r);
  }
  QTableView* table = w->trialsView();
  TB_WAIT_FOR(table->horizontalHeader()->length() > 0, kTimeoutMs);
  QTest::qWait(300);  // the columns are refitted on a short timer
  EXPECT_EQ(table->horizontalScrollBar()->maximum(), 0) << "the trials table scrolls sideways";
  int reason = -1;
  for (int c = 0; c < m->columnCount(); ++c)
    if (m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().startsWith(QStringLiteral("Reason"))) reason = c;
  ASSERT_GE(reason, 0);
  EXPECT_GE(table->columnWidth(reason), table->fontMetrics().horizontalAdvance(QStringLiteral("Reason: rank 1 failed")))
      << "the reason column is " << table->columnWidth(reason) << " px";
}
