// Screenshots of the window for docs/UI.md, in a light or a dark theme: a stored trial of the
// H200 example session (a copy), the timeline's tools on it (a search, a selected span and its
// summary, trials grouped by strategy), and the comparison of three of its trials (comparison,
// diagnosis and curves tabs). Run under Xvfb:
//   tunebench-window-screenshot OUT_PREFIX light|dark [WxH]
// writes OUT_PREFIX-stored.png, -timeline.png, -compare.png, -diagnosis.png, -curves.png; the
// main window at WxH (default 1600x1000, e.g. a laptop's 1280x760), the comparison at 1600x1000.
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "ui/models/trials_model.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_viewer.h"
#include "tests/ui/windows/screenshot_support.h"

using namespace tunebench;
using namespace tunebench::ui;


int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (!start_screenshots(argc, argv, 3, "OUT_PREFIX light|dark [WxH]")) return 2;
  const QString prefix = QString::fromLocal8Bit(argv[1]);
  QTemporaryDir dir;
  const QString session = dir.filePath(QStringLiteral("h200-7b.tbsession"));
  QFile::copy(QStringLiteral(TUNEBENCH_SESSIONS_DIR "/h200-7b.tbsession"), session);
  QFile::setPermissions(session, QFile::permissions(session) | QFileDevice::WriteOwner);

  MainWindow w(screenshot_window_options());
  show_for_screenshots(w, parse_screenshot_size(argc > 3 ? argv[3] : nullptr, QSize(1600, 1000)));
  w.sessionActions()->openSession(session);
  settle(w);
  // The NCCL_P2P_DISABLE=1 run: the exposed all-reduce is the story.
  int noP2p = 0;
  for (int r = 0; r < w.trialsModel()->rowCount(); ++r)
    if (QString::fromStdString(w.trialsModel()->record(r).config.name).contains(QStringLiteral("P2P"))) noP2p = r;
  w.selectRows({QString::number(noP2p)});
  settle(w);
  bool ok = save_screenshot(w, prefix + QStringLiteral("-stored.png"));

  // The timeline's tools: find the all-reduces, a span of two steps and its summary, groups.
  TimelinePlot* timeline = w.liveView()->timeline();
  const auto& marks = timeline->data().stepMarks();
  if (marks.size() > 6) {
    timeline->zoomToRange(marks[3].t_s - 0.1, marks[6].t_s + 0.1);
    timeline->setSelectedRange(marks[4].t_s, marks[6].t_s);
  }
  QTest::keyClicks(w.liveView()->searchField(), QStringLiteral("all-reduce"));
  timeline->stepMatch(+1);
  if (marks.size() > 6) timeline->zoomToRange(marks[3].t_s - 0.1, marks[6].t_s + 0.1);
  auto* groupBy = w.findChild<QComboBox*>(QStringLiteral("groupBy"));
  groupBy->setCurrentIndex(groupBy->findData(QStringLiteral("strategy")));
  ok = save_screenshot(w, prefix + QStringLiteral("-timeline.png")) && ok;

  // Three trials compared, as `tunebench-cli report --trials 2,4,5` does.
  QList<int> rows;
  for (int r = 0; r < w.trialsModel()->rowCount(); ++r) {
    const QString name = QString::fromStdString(w.trialsModel()->record(r).config.name);
    if (name == QStringLiteral("7B single GPU, checkpointing") ||
        name.startsWith(QStringLiteral("7B DDP x2, checkpointing")))
      rows << r;
  }
  w.analysis()->compareRows(rows);
  QTest::qWaitFor([&] { return w.analysis()->lastComparison() != nullptr; }, 60000);
  if (ComparisonWindow* c = w.analysis()->lastComparison()) {
    c->resize(1600, 1000);
    ok = save_screenshot(*c, prefix + QStringLiteral("-compare.png")) && ok;
    c->tabs()->setCurrentIndex(1);
    ok = save_screenshot(*c, prefix + QStringLiteral("-diagnosis.png")) && ok;
    c->tabs()->setCurrentIndex(2);
    ok = save_screenshot(*c, prefix + QStringLiteral("-curves.png")) && ok;
  } else {
    ok = false;
  }
  return ok ? 0 : 1;
}
