// The report from the GUI: File > Export report… of the selected trials and the comparison
// window's "Export report…" write core/report's HTML or Markdown; File > Open of that .html gives
// the trials back as a new session, and Import adds them to the open one.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QMenu>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>

#include "core/report/embedded_session.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
QString read_all(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

// Opens a copy of the recorded 7B session and selects the no-P2P comparison (trials 2, 4, 5).
QList<int> open_no_p2p(MainWindow& w, const QTemporaryDir& dir) {
  const QString copy = dir.filePath(QStringLiteral("h200-7b.tbsession"));
  QFile::copy(QStringLiteral(TUNEBENCH_SESSIONS_DIR "/h200-7b.tbsession"), copy);
  QFile::setPermissions(copy, QFile::permissions(copy) | QFileDevice::WriteOwner);
  w.sessionActions()->openSession(copy);
  wait_jobs(w);
  QList<int> rows;
  for (int row = 0; row < w.trialsModel()->rowCount(); ++row)
    if (const qint64 id = w.session()->storeId(w.trialsModel()->record(row).id); id == 2 || id == 4 || id == 5)
      rows << row;
  w.trialsView()->selectionModel()->clearSelection();  // opening selects the first row
  for (int row : rows)
    w.trialsView()->selectionModel()->select(w.trialsModel()->index(row, 0),
                                             QItemSelectionModel::Select | QItemSelectionModel::Rows);
  return rows;
}

QStringList names(MainWindow& w) {
  QStringList out;
  for (int row = 0; row < w.trialsModel()->rowCount(); ++row)
    out << QString::fromStdString(w.trialsModel()->record(row).config.name);
  out.sort();
  return out;
}
}  // namespace

TEST(ReportExport, TheSelectedTrialsBecomeAReportThatOpensAsTheirSession) {
  QTemporaryDir dir;
  auto w = make_window();
  const QList<int> rows = open_no_p2p(*w, dir);
  ASSERT_EQ(rows.size(), 3);
  const QStringList selected = w->sessionActions()->selectedTrialIds();
  ASSERT_EQ(selected.size(), 3);
  QStringList expected;
  for (const QString& id : selected) expected << QString::fromStdString(w->trialsModel()->find(id)->config.name);
  expected.sort();

  // The File menu offers it, enabled for a selection.
  QAction* action = nullptr;
  for (QAction* a : w->sessionActions()->fileMenu()->actions())
    if (a->objectName() == QStringLiteral("actionExportReport")) action = a;
  ASSERT_NE(action, nullptr);
  EXPECT_TRUE(action->isEnabled());

  const QString html = dir.filePath(QStringLiteral("no-p2p"));  // ".html" is added
  ASSERT_TRUE(w->sessionActions()->exportReport(selected, html));
  wait_jobs(*w);
  const QString text = read_all(html + QStringLiteral(".html"));
  ASSERT_TRUE(text.startsWith(QStringLiteral("<!DOCTYPE html>"))) << text.left(200).toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("delivers the most throughput")));
  EXPECT_TRUE(report::is_report_file((html + QStringLiteral(".html")).toStdString()));

  const QString md = dir.filePath(QStringLiteral("no-p2p.md"));
  ASSERT_TRUE(w->sessionActions()->exportReport(selected, md));
  wait_jobs(*w);
  const QString summary = read_all(md);
  EXPECT_TRUE(summary.startsWith(QStringLiteral("### Tunebench report"))) << summary.left(200).toStdString();
  EXPECT_LE(summary.count(QLatin1Char('\n')), 60);

  // File > Open of the report: a new session with exactly those trials.
  ASSERT_TRUE(w->sessionActions()->openSession(html + QStringLiteral(".html")));
  wait_jobs(*w);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == 3, kTimeoutMs);
  EXPECT_EQ(names(*w), expected);
  EXPECT_TRUE(w->session()->path().endsWith(QStringLiteral(".tbsession")));
  EXPECT_TRUE(w->session()->isForeign());  // its configs are previewed before they run
  const auto restored = w->session()->loadTrial(w->trialsModel()->record(0).id);
  ASSERT_TRUE(restored);
  EXPECT_GT(restored->log.ranks.at(0).steps.size(), 5u);  // the steps came back, not just names

  // Import of the same report adds them to the open session.
  ASSERT_TRUE(w->sessionActions()->importFiles({html + QStringLiteral(".html")})) << w->sessionActions()->lastError().toStdString();
  wait_jobs(*w);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == 6, kTimeoutMs);

  // A page that is not a report is refused with the kinds Tunebench imports.
  const QString page = dir.filePath(QStringLiteral("page.html"));
  QFile f(page);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("<html><body>hello</body></html>");
  f.close();
  EXPECT_FALSE(w->sessionActions()->importFiles({page}));
  EXPECT_TRUE(w->sessionActions()->lastError().contains(QStringLiteral("Tunebench reports")))
      << w->sessionActions()->lastError().toStdString();
  // And opening it says why, changing nothing.
  ASSERT_TRUE(w->sessionActions()->openSession(page));
  wait_jobs(*w);
  TB_WAIT_FOR(w->sessionActions()->lastError().contains(QStringLiteral("carries no Tunebench session")), kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->rowCount(), 6);
}

TEST(ReportExport, TheComparisonWindowExportsItsTrials) {
  QTemporaryDir dir;
  auto w = make_window();
  const QList<int> rows = open_no_p2p(*w, dir);
  ASSERT_EQ(rows.size(), 3);
  w->analysis()->compareRows(rows);
  TB_WAIT_FOR(w->analysis()->lastComparison() != nullptr, kTimeoutMs);
  ComparisonWindow* cmp = w->analysis()->lastComparison();
  auto* button = cmp->findChild<QPushButton*>(QStringLiteral("exportReport"));
  ASSERT_NE(button, nullptr);
  ASSERT_TRUE(button->isEnabled());
  button->click();
  // The save dialog (window-modal, not blocking) is the session's; answer it.
  QFileDialog* dialog = nullptr;
  TB_WAIT_FOR((dialog = w->findChild<QFileDialog*>()) != nullptr, kTimeoutMs);
  EXPECT_EQ(dialog->windowTitle(), QStringLiteral("Export report"));
  const QString path = dir.filePath(QStringLiteral("from-comparison.html"));
  emit dialog->fileSelected(path);
  dialog->close();
  wait_jobs(*w);
  TB_WAIT_FOR(QFileInfo::exists(path), kTimeoutMs);
  const auto embedded = report::read_embedded_session_file(path.toStdString());
  EXPECT_EQ(embedded.trials.size(), 3u);
}
