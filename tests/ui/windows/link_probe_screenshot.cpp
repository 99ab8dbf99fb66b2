// Screenshots of issue 11 item 2 and issue 14 for docs/UI.md (not a test). Run under Xvfb:
//   tunebench-probe-screenshot OUT_PREFIX WORKER [light|dark]
// writes OUT_PREFIX-probe.png (Trial > Measure the link… on 2 CPU ranks over Gloo with the real
// WORKER, its points stored, the Prediction dock naming the probe as the link's source) and
// OUT_PREFIX-ssh-preview.png (the form's Where group set to SSH, and the launch preview that Run
// shows first: "Run on gpu1, gpu2 over SSH?"; it is cancelled, nothing runs).
#include <QApplication>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QPushButton>
#include <QScreen>
#include <QStandardPaths>
#include <QTest>

#include "ui/windows/launch_preview.h"
#include "ui/windows/link_probe_controller.h"
#include "ui/windows/link_probe_dialog.h"
#include "ui/windows/main_window.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
bool save_screen(const QString& file) {
  QTest::qWait(500);
  const bool ok = QGuiApplication::primaryScreen()->grabWindow(0).save(file);
  if (!ok) fprintf(stderr, "could not write %s\n", qPrintable(file));
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  if (argc < 3) {
    fprintf(stderr, "usage: %s OUT_PREFIX WORKER [light|dark]\n", argv[0]);
    return 2;
  }
  remember_system_theme();
  apply_theme(theme_from_string(argc > 3 ? QString::fromLocal8Bit(argv[3]) : QStringLiteral("light")));
  const QString prefix = QString::fromLocal8Bit(argv[1]);
  MainWindow::Options o;
  o.workerProgram = QString::fromLocal8Bit(argv[2]);
  o.useSettings = false;
  MainWindow w(o);
  w.resize(1600, 1000);
  w.move(0, 0);
  w.show();
  if (!QTest::qWaitForWindowExposed(&w)) return 1;

  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.device = config::Device::Cpu;
  w.form()->setConfig(c);
  w.action(QStringLiteral("actionMeasureLink"))->trigger();
  LinkProbeDialog* d = w.linkProbe()->dialog();
  d->move(1000, 420);
  d->minMb()->setValue(1);
  d->maxMb()->setValue(16);
  d->measureButton()->click();
  using S = LinkProbeDialog::State;
  if (!QTest::qWaitFor([&] { return d->state() == S::Stored || d->state() == S::Failed || d->state() == S::Cancelled; },
                       300000))
    return 1;
  if (!QTest::qWaitFor([&] { return w.prediction()->loading() == 0; }, 60000)) return 1;
  fprintf(stderr, "probe: %s\nlink: %s\n", qPrintable(d->statusText()),
          qPrintable(w.prediction()->panel()->linkText()));
  int failures = save_screen(prefix + QStringLiteral("-probe.png")) ? 0 : 1;
  d->close();

  c.launcher = config::Launcher::Ssh;
  config::parse_ssh_hosts("gpu1 ranks=1; alice@gpu2:2222 ranks=1", c.ssh_hosts);
  c.remote_env = {{"LD_LIBRARY_PATH", "/opt/torch/lib"}};
  w.form()->setConfig(c);
  // The Where group in view: SSH hosts, command and remote worker; no SLURM fields.
  if (auto* area = qobject_cast<QScrollArea*>(w.findChild<QDockWidget*>(QStringLiteral("trialDock"))->widget()))
    QTimer::singleShot(0, area, [area] { area->verticalScrollBar()->setValue(area->verticalScrollBar()->maximum()); });
  w.runTrial();
  LaunchPreviewDialog* preview = w.launcher()->pendingPreview();
  if (!preview) return 1;
  preview->resize(900, 640);
  preview->move(660, 140);
  failures += save_screen(prefix + QStringLiteral("-ssh-preview.png")) ? 0 : 1;
  preview->reject();
  QTest::qWait(200);
  return failures;
}
