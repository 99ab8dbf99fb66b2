// Issue 15 items 8 and 9 in the real window: fit to data, docks that keep their share when the
// window grows, the log's stderr lines, the telemetry plot of a CPU machine, the preset box after
// an edit, units beside the fields, what Stop is called in the log, and the Save As shortcut.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "tests/ui/windows/window_test_util.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
}  // namespace

TEST(WindowDetails, TheTimelineHasFitToData) {
  auto w = make_window();
  QAction* fit = w->action(QStringLiteral("actionFitTimeline"));
  ASSERT_NE(fit, nullptr);
  EXPECT_FALSE(fit->shortcut().isEmpty());
}

TEST(WindowDetails, GrowingTheWindowKeepsTheDocksShare) {
  auto w = make_window();
  auto* trials = w->findChild<QDockWidget*>(QStringLiteral("trialsDock"));
  auto* form = w->findChild<QDockWidget*>(QStringLiteral("trialDock"));
  ASSERT_TRUE(trials && form);
  w->resize(800, 500);
  TB_WAIT_FOR(w->height() < 900, kTimeoutMs);  // smaller than make_window's 900
  w->resize(1600, 1000);
  // The layout settles a turn of the event loop after the resize (on a loaded machine, later):
  // wait for the docks to have their share again, which never comes when nothing keeps it.
  TB_EXPECT_WAIT_FOR(w->height() > 900 && trials->height() >= 1000 * 0.18, kTimeoutMs)
      << "the trials dock stayed squeezed at " << trials->height() << " of " << w->height();
  EXPECT_GE(form->width(), 340);
}

TEST(WindowDetails, NormalStderrLinesAreNotLabelledAsErrors) {
  const QString line = LogPane::format({0, LogLine::Source::Stderr, QStringLiteral("step 3: loss 2.41, 812 ms")});
  EXPECT_FALSE(line.contains(QStringLiteral("err"))) << line.toStdString();
  EXPECT_TRUE(line.contains(QStringLiteral("rank 0")));
}

TEST(WindowDetails, TheEmptyTelemetryPlotOfACpuMachineSaysCpu) {
  auto w = make_window(cpu_machine());
  const QString label = w->liveView()->telemetry()->panel(0)->axis(QCPAxis::atLeft)->label();
  EXPECT_TRUE(label.contains(QStringLiteral("CPU"))) << label.toStdString();
}

TEST(WindowDetails, ThePresetBoxShowsThatFieldsWereEdited) {
  auto w = make_window();
  ASSERT_TRUE(w->form()->applyPreset(QStringLiteral("cpu-tiny")));
  auto* steps = qobject_cast<QSpinBox*>(w->form()->field(QStringLiteral("steps"))->editor());
  steps->clear();
  QTest::keyClicks(steps, QStringLiteral("77"));
  EXPECT_NE(w->form()->presetCombo()->currentText(), QStringLiteral("cpu-tiny"));
  EXPECT_TRUE(w->form()->presetCombo()->currentText().contains(QStringLiteral("edited")))
      << w->form()->presetCombo()->currentText().toStdString();
}

TEST(WindowDetails, UnitsStandBesideTheirFields) {
  auto w = make_window();
  const std::pair<const char*, const char*> expected[] = {
      {"bucket_mb", "MiB"}, {"gpu_sample_hz", "Hz"}, {"rendezvous_timeout_s", "s"}, {"collective_timeout_s", "s"}};
  for (const auto& [key, unit] : expected) {
    KnobField* field = w->form()->field(QString::fromLatin1(key));
    ASSERT_NE(field, nullptr) << key;
    bool shown = false;
    for (QLabel* l : field->findChildren<QLabel*>())
      shown = shown || (l->isVisibleTo(w.get()) && l->text() == QString::fromUtf8(unit));
    if (auto* spin = qobject_cast<QSpinBox*>(field->editor()))
      shown = shown || spin->suffix().trimmed() == QString::fromUtf8(unit);
    EXPECT_TRUE(shown) << key << " shows no " << unit;
  }
}

TEST(WindowDetails, StopIsLoggedAsAStopNotAsATerminationFromOutside) {
  auto w = make_window();
  qputenv("TUNEBENCH_FAKE_STEP_MS", "100");
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.steps = 100000;
  c.warmup = 1;
  w->form()->setConfig(c);
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(w->queue()->runner()->isActive() && w->liveView()->timeline()->barCount() > 0, 30000);
  w->stopTrial();
  TB_WAIT_FOR(finished.size() == 1, 30000);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
  w->logPane()->flush();
  const QString log = w->logPane()->toPlainText();
  EXPECT_FALSE(log.contains(QStringLiteral("from outside"))) << log.toStdString();
  EXPECT_TRUE(log.contains(QStringLiteral("stopped"))) << log.toStdString();
}

TEST(WindowDetails, SaveSessionAsIsCtrlShiftS) {
  auto w = make_window();
  QAction* saveAs = w->action(QStringLiteral("actionSaveSessionAs"));
  ASSERT_NE(saveAs, nullptr);
  EXPECT_EQ(saveAs->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
}
