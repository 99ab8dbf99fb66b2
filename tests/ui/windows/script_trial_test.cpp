// Your own PyTorch script as a trial in the window (issue 39), with real PyTorch (Debian's
// python3-torch on the CPU; the tests skip without it): the form's "Run: your own script", the
// script's live phases, the trial stored with the script's name, and the A/B that matters: a
// loader-bound script, then the same with loader processes applied from the form, compared, the
// data wait gone and the diagnosis saying so.
#include <gtest/gtest.h>

#include <QApplication>
#include <QPushButton>
#include <QProcess>

#include "core/store/session_store.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/live_view.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

constexpr int kScriptTimeoutMs = 180000;  // importing torch and a few steps, on 2 shared cores
const QString kPython = QStringLiteral("/usr/bin/python3");

bool python_has_torch() {
  QProcess p;
  p.start(kPython, {QStringLiteral("-c"), QStringLiteral("import torch")});
  return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

#define REQUIRE_TORCH()                                                                              \
  if (!python_has_torch())                                                                           \
  GTEST_SKIP() << "/usr/bin/python3 cannot import torch (apt install python3-torch): no real script runs"

// The loader-bound script of tests/app/probe: 40 ms of "disk" per batch, little compute.
config::TrialConfig loader_script(int steps) {
  config::TrialConfig c;
  c.name = "loader";
  c.script = TUNEBENCH_PROBE_SCRIPTS_DIR "/train_mlp.py";
  c.python = kPython.toStdString();
  c.script_args = "--batch-size {micro_batch} --batch-sleep-ms 40 --sample-cpu-us 0";
  c.steps = steps;
  c.warmup = 2;
  return c;
}

}  // namespace

TEST(ScriptTrial, TheWindowRunsAScriptLiveAndComparesAnAppliedKnob) {
  REQUIRE_TORCH();
  auto w = make_window();
  // The form: the script's mode shows its group and the knobs a script can take, not the model.
  w->form()->setConfig(loader_script(12));
  EXPECT_TRUE(w->form()->isScriptMode());
  EXPECT_TRUE(w->form()->isFieldShown(QStringLiteral("script_args")));
  EXPECT_TRUE(w->form()->isFieldShown(QStringLiteral("num_workers")));
  EXPECT_TRUE(w->form()->isFieldShown(QStringLiteral("micro_batch")));  // the arguments name it
  EXPECT_FALSE(w->form()->isFieldShown(QStringLiteral("model")));
  EXPECT_FALSE(w->form()->isFieldShown(QStringLiteral("checkpointing")));
  EXPECT_EQ(w->form()->problems().size(), 0u) << config::describe(w->form()->problems());

  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(finished.size() == 1, kScriptTimeoutMs);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  const TrialRecord first = w->trialsModel()->record(0);
  EXPECT_EQ(first.status, protocol::TrialStatus::Done) << first.reason.toStdString();
  EXPECT_EQ(first.step, 12);
  EXPECT_EQ(w->trialsModel()->data(w->trialsModel()->index(0, TrialsModel::Model), Qt::DisplayRole).toString(),
            QStringLiteral("train_mlp.py"));
  // The live timeline drew the script's phases, data wait among them.
  EXPECT_GT(w->liveView()->timeline()->barCount(), size_t(12 * 3));

  // Editing num_workers in script mode applies it to the script; run again and compare.
  KnobField* workers = w->form()->field(QStringLiteral("num_workers"));
  workers->setText(QStringLiteral("4"));
  emit workers->edited();
  EXPECT_EQ(w->form()->config().script_knobs, std::vector<std::string>{"num_workers"});
  config::TrialConfig b = w->form()->config();
  b.name = "loader nw4";
  w->form()->setConfig(b);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(finished.size() == 2, kScriptTimeoutMs);
  ASSERT_EQ(w->trialsModel()->record(1).status, protocol::TrialStatus::Done) << w->trialsModel()->record(1).reason.toStdString();

  // Stored trials load in the background: the window opens when they arrive.
  ComparisonWindow* cmp = w->analysis()->compareRows({0, 1});
  auto opened = [&cmp] {
    for (QWidget* top : QApplication::topLevelWidgets())
      if (auto* c = qobject_cast<ComparisonWindow*>(top); c && c->isVisible()) cmp = c;
    return cmp != nullptr;
  };
  TB_WAIT_FOR(opened(), kTimeoutMs);
  TB_WAIT_FOR(cmp->report().comparison.trials.size() == 2, kTimeoutMs);
  const auto& trials = cmp->report().comparison.trials;
  const auto wait = [](const analysis::TrialMetrics& t) { return t.breakdown[analysis::Part::DataWait]; };
  EXPECT_GT(wait(trials[0]), 30.0);  // 40 ms of "disk" per batch on the training thread
  EXPECT_LT(wait(trials[1]), 0.5 * wait(trials[0]));
  const QString diagnosis = cmp->diagnosisView()->text();
  EXPECT_TRUE(diagnosis.contains(QStringLiteral("data-bound"))) << diagnosis.toStdString();
  // The suggestion's button: what the probe can apply to this script.
  QStringList buttons;
  for (QPushButton* b : cmp->diagnosisView()->suggestionButtons()) buttons << b->text();
  EXPECT_TRUE(buttons.join(' ').contains(QStringLiteral("num_workers"))) << buttons.join(" | ").toStdString();
  cmp->close();
}

// No interpreter named: the form looks for one off the GUI thread, and the launch preview then
// shows the exact command line with the interpreter found, which is what the launch takes.
TEST(ScriptTrial, ThePreviewShowsTheInterpreterTheFormFound) {
  REQUIRE_TORCH();
  qputenv("TUNEBENCH_PYTHON", kPython.toUtf8());  // the search's first candidate
  auto w = make_window();
  config::TrialConfig c = loader_script(3);
  c.python.clear();
  w->form()->setConfig(c);
  ASSERT_TRUE(w->form()->isScriptMode());
  TB_WAIT_FOR(w->form()->pythonFound().contains(QStringLiteral(": PyTorch ")), kScriptTimeoutMs);  // found
  EXPECT_TRUE(w->form()->pythonFound().startsWith(kPython)) << w->form()->pythonFound().toStdString();
  const QString preview = launch_preview(w->form()->config(), QString(), QStringLiteral("<trial id>"));
  EXPECT_TRUE(preview.contains(kPython + QStringLiteral(" -m tunebench_probe --config"))) << preview.toStdString();
  EXPECT_FALSE(preview.contains(QStringLiteral("found at launch"))) << preview.toStdString();
  qunsetenv("TUNEBENCH_PYTHON");
}

// The runner reads a kernel-sampled window's trace off the GUI thread (TrialRunner::foldNext): the
// steps behind it wait for it, so every step arrives, in order, and the trace's verdict (on the CPU:
// no GPU kernels) is said before the trial ends.
TEST(ScriptTrial, KernelSampledStepsArriveInOrderWithTheirTracesVerdict) {
  REQUIRE_TORCH();
  auto w = make_window();
  config::TrialConfig c = loader_script(8);
  c.name = "sampled";
  c.script_args = "--batch-size {micro_batch} --sample-cpu-us 0";
  c.warmup = 1;
  c.kernel_sample_every = 3;
  c.kernel_sample_steps = 1;  // steps 1, 4 and 7: three windows, three traces
  w->form()->setConfig(c);
  ASSERT_EQ(w->form()->problems().size(), 0u) << config::describe(w->form()->problems());
  std::vector<int64_t> order;
  QObject::connect(w->queue()->runner(), &LiveSource::eventsArrived, w.get(), [&order](const EventBatch& batch) {
    for (const auto& e : batch)
      if (e.is<protocol::Step>() && e.header.rank == 0) order.push_back(e.as<protocol::Step>().step);
  });
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(finished.size() == 1, kScriptTimeoutMs);
  const TrialRecord r = w->trialsModel()->record(0);
  ASSERT_EQ(r.status, protocol::TrialStatus::Done) << r.reason.toStdString();
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  w->logPane()->flush();
  EXPECT_TRUE(w->logPane()->toPlainText().contains(QStringLiteral("a CPU run has no GPU kernels")))
      << w->logPane()->toPlainText().toStdString();
}
