// Screenshots of imported torch.profiler traces for docs/UI.md, taken through the window's own
// import path (TraceImportActions: a background job, progress dialog, one transaction). Run under Xvfb:
//   tunebench-trace-screenshot OUT_PREFIX [WxH] [light|dark]
// imports tests/data/traces/single-nw4 and ddp-nw4 (2 ranks) into a scratch session and writes
// OUT_PREFIX-progress.png (the import's progress dialog while it waits for the job thread),
// OUT_PREFIX-window.png (the DDP trial shown, trials table and log), OUT_PREFIX-compare.png (the
// comparison: diff, metrics, breakdown, representative steps with the comm lanes),
// OUT_PREFIX-diagnosis.png and OUT_PREFIX-settings.png (Trial > Settings… of the DDP trial).
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <QApplication>
#include <QProgressDialog>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/theme.h"
#include "ui/windows/trace_import_actions.h"
#include "ui/windows/trial_viewer.h"

using namespace tunebench;

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

bool save(QWidget& w, const QString& file) {
  QTest::qWait(300);
  if (auto* m = qobject_cast<ui::MainWindow*>(&w)) m->liveView()->replotNow();
  QTest::qWait(200);
  if (w.grab().save(file)) return true;
  std::fprintf(stderr, "could not write %s\n", qPrintable(file));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_PREFIX [WxH] [light|dark]\n", argv[0]);
    return 2;
  }
  const QString prefix = QString::fromLocal8Bit(argv[1]);
  QSize size(1600, 1000);
  if (argc > 2) {
    const QStringList wh = QString::fromLocal8Bit(argv[2]).split(QLatin1Char('x'));
    if (wh.size() == 2) size = QSize(wh[0].toInt(), wh[1].toInt());
  }
  ui::remember_system_theme();
  if (argc > 3) ui::apply_theme(ui::theme_from_string(QString::fromLocal8Bit(argv[3])));
  std::atomic<bool> started{false}, release{false};  // declared before the window: outlive its jobs
  ui::MainWindow::Options o;
  o.useSettings = false;
  o.detectDevices = false;
  ui::MainWindow window(o);
  window.resize(size);
  window.show();
  if (!QTest::qWaitForWindowExposed(&window)) std::fprintf(stderr, "the window was not exposed\n");
  ui::TraceImportActions* t = window.traceImport();
  bool ok = true;
  for (const auto& [run, name] :
       {std::pair{"single-nw4", "my job, 1 GPU"}, std::pair{"ddp-nw4", "my job, DDP 2 GPUs"}}) {
    QSignalSpy ended(t, &ui::TraceImportActions::traceImportEnded);
    // The first import waits behind a job that holds the job thread, for the progress dialog's picture.
    const bool first = window.trialsModel()->rowCount() == 0;
    if (first)
      window.jobs()->submit(QStringLiteral("Holding the job thread"), [&](ui::JobProgress&) {
        started = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return ui::BackgroundJobs::Apply();
      });
    const bool importing = t->importTraces(
        traces(run), QString::fromUtf8(name),
        {QStringLiteral("micro_batch=8"), QStringLiteral("seq_len=512"), QStringLiteral("grad_accum=1")});
    if (importing && first && t->progressDialog()) {
      if (!QTest::qWaitFor([&] { return started.load(); }, 10000)) std::fprintf(stderr, "no job thread\n");
      ok = save(*t->progressDialog(), prefix + QStringLiteral("-progress.png")) && ok;
    }
    release = true;
    if (!importing || !ended.wait(60000) || window.trialsModel()->rowCount() == 0) {
      std::fprintf(stderr, "import of %s failed: %s\n", run, qPrintable(window.sessionActions()->lastError()));
      return 1;
    }
  }
  // The last import is the trial shown; it is loaded for the view in the background.
  if (!window.jobs()->waitForIdle(60000) || !QTest::qWaitFor([&] { return !window.viewer()->isLoading(); }, 60000))
    std::fprintf(stderr, "the imported trial was not drawn in time\n");
  ok = save(window, prefix + QStringLiteral("-window.png")) && ok;

  window.analysis()->compareRows({0, 1});  // stored trials: loaded in the background, then opened
  window.jobs()->waitForIdle(60000);
  ui::ComparisonWindow* c = window.analysis()->lastComparison();
  if (!c) return 1;
  c->resize(size);
  c->show();
  QTest::qWait(400);
  c->replotNow();
  ok = save(*c, prefix + QStringLiteral("-compare.png")) && ok;
  c->tabs()->setCurrentIndex(1);
  ok = save(*c, prefix + QStringLiteral("-diagnosis.png")) && ok;
  c->close();

  ui::KnownSettingsDialog* d = t->showSettings(window.trialsModel()->record(1).id);
  if (!d) return 1;
  d->resize(560, 900);
  ok = save(*d, prefix + QStringLiteral("-settings.png")) && ok;
  return ok ? 0 : 1;
}
