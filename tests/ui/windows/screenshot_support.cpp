#include "tests/ui/windows/screenshot_support.h"

#include <cstdio>

#include <QStandardPaths>
#include <QTest>

#include "ui/runner/background_jobs.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/theme.h"
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

bool start_screenshots(int argc, char** argv, int min_args, const char* usage) {
  QStandardPaths::setTestModeEnabled(true);
  if (argc < min_args) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return false;
  }
  remember_system_theme();
  apply_theme(theme_from_string(QString::fromLocal8Bit(argv[2])));
  return true;
}

MainWindow::Options screenshot_window_options() {
  MainWindow::Options o;
  o.useSettings = false;
  o.detectDevices = false;
  o.devices.cpu_name = QStringLiteral("AMD EPYC");
  o.devices.cpu_cores = 2;
  return o;
}

QSize parse_screenshot_size(const char* text, QSize fallback) {
  const QStringList parts = QString::fromLocal8Bit(text ? text : "").split(QLatin1Char('x'));
  bool w = false, h = false;
  const QSize size = parts.size() == 2 ? QSize(parts[0].toInt(&w), parts[1].toInt(&h)) : QSize();
  return w && h && size.isValid() ? size : fallback;
}

void show_for_screenshots(MainWindow& w, QSize size) {
  w.resize(size);
  w.show();
  if (!QTest::qWaitForWindowExposed(&w)) std::fprintf(stderr, "the window was not exposed\n");
}

}  // namespace tunebench::ui
