#include "tests/ui/windows/screenshot_support.h"

#include <cstdio>

#include <QTest>

#include "ui/runner/background_jobs.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/trial_viewer.h"

namespace tunebench::ui {

bool save_screenshot(QWidget& w, const QString& file) {
  QTest::qWait(300);
  if (auto* c = qobject_cast<ComparisonWindow*>(&w)) c->replotNow();
  if (auto* m = qobject_cast<MainWindow*>(&w)) m->liveView()->replotNow();
  QTest::qWait(200);
  const bool ok = w.grab().save(file);
  if (!ok) std::fprintf(stderr, "could not write %s\n", qPrintable(file));
  return ok;
}

void settle(MainWindow& w) {
  w.jobs()->waitForIdle(60000);
  if (!QTest::qWaitFor([&] { return !w.viewer()->isLoading(); }, 60000))
    std::fprintf(stderr, "the trial viewer is still loading after 60 s\n");
  QTest::qWait(300);
}

}  // namespace tunebench::ui
