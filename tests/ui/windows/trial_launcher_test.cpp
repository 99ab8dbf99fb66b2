// TrialLauncher (issue 14): a trial of the user's own that runs on other machines (SSH, SLURM) is
// shown first — the ssh commands and the hosts' script, srun's command or the sbatch script —
// under a question naming where it runs, and starts only when accepted; a local trial of the
// user's own starts at once, as before. The SSH trial runs through a stand-in ssh
// (tests/core/launch/fake_ssh.sh) and the fake worker.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QDialogButtonBox>
#include <QSignalSpy>
#include <QStatusBar>

#include "tests/ui/wait_for.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

const char* const kFakeSsh = TUNEBENCH_TEST_DATA_DIR "/../core/launch/fake_ssh.sh";

config::TrialConfig own_config(int steps) {
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.name = "mine";
  c.steps = steps;
  c.warmup = 1;
  return c;
}

config::TrialConfig ssh_config(int steps) {
  config::TrialConfig c = own_config(steps);
  c.launcher = config::Launcher::Ssh;
  EXPECT_FALSE(config::parse_ssh_hosts("hostA ranks=1; hostB ranks=1", c.ssh_hosts));
  c.ssh_command = kFakeSsh;
  c.remote_worker = TUNEBENCH_FAKE_WORKER;
  return c;
}

void answer(LaunchPreviewDialog* preview, QDialogButtonBox::ButtonRole role) {
  auto* box = preview->findChild<QDialogButtonBox*>();
  ASSERT_NE(box, nullptr);
  for (QAbstractButton* b : box->buttons())
    if (box->buttonRole(b) == role) return b->click();
  FAIL() << "no button of that role";
}

}  // namespace

TEST(TrialLauncher, AnSshTrialOfTheUsersOwnIsPreviewedAndStartsOnlyWhenAccepted) {
  auto w = make_window();
  w->form()->setConfig(ssh_config(3));
  ASSERT_FALSE(w->form()->origin().fromSession);  // the user's own
  ASSERT_EQ(w->form()->validateAndShow(), 0);

  EXPECT_FALSE(w->runTrial());  // not started: asked first
  LaunchPreviewDialog* preview = w->launcher()->pendingPreview();
  ASSERT_NE(preview, nullptr);
  EXPECT_TRUE(preview->isVisible());
  EXPECT_EQ(preview->windowTitle(), "Run on hostA, hostB over SSH?");
  EXPECT_TRUE(preview->introText().contains("other machines")) << preview->introText().toStdString();
  EXPECT_TRUE(preview->introText().contains("hostA, hostB")) << preview->introText().toStdString();
  EXPECT_FALSE(preview->introText().contains("another session"));
  const QString text = preview->previewText();
  EXPECT_TRUE(text.contains("Environment of node 0 (hostA)")) << text.toStdString();
  EXPECT_TRUE(text.contains("Environment of node 1 (hostB)")) << text.toStdString();
  EXPECT_TRUE(text.contains(QString(kFakeSsh) + " -T -o BatchMode=yes")) << text.toStdString();  // the ssh command
  EXPECT_TRUE(text.contains("-R '/tmp/tunebench-RANDOM-0.sock:$TMP/events.sock' hostA")) << text.toStdString();
  EXPECT_TRUE(text.contains("hostA 'sh -c SCRIPT'")) << text.toStdString();
  EXPECT_TRUE(text.contains("the script it runs on hostA:\n# tunebench node 0")) << text.toStdString();
  EXPECT_TRUE(text.contains("--trial '<trial id>' </dev/null")) << text.toStdString();  // what the host starts
  EXPECT_TRUE(text.contains(TUNEBENCH_FAKE_WORKER)) << text.toStdString();              // the remote worker

  // Nothing runs, nothing is queued while the question is open (a queued trial would have its
  // row at once and start on the next turn of the event loop).
  QCoreApplication::processEvents();
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_FALSE(w->queue()->runner()->isActive());
  EXPECT_TRUE(w->queue()->isIdle());

  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  answer(preview, QDialogButtonBox::AcceptRole);
  EXPECT_EQ(w->launcher()->pendingPreview(), nullptr);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  const TrialRecord& r = w->trialsModel()->record(0);
  EXPECT_EQ(r.status, protocol::TrialStatus::Done) << r.reason.toStdString();
  EXPECT_EQ(r.step, 3);
  const auto info = w->session()->trialInfo(r.id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, protocol::TrialStatus::Done);
}

TEST(TrialLauncher, CancellingTheSshPreviewRunsNothing) {
  auto w = make_window();
  w->form()->setConfig(ssh_config(3));
  EXPECT_FALSE(w->runTrial());
  LaunchPreviewDialog* preview = w->launcher()->pendingPreview();
  ASSERT_NE(preview, nullptr);
  answer(preview, QDialogButtonBox::RejectRole);
  TB_WAIT_FOR(w->launcher()->pendingPreview() == nullptr, kTimeoutMs);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
  EXPECT_FALSE(w->queue()->runner()->isActive());
  EXPECT_TRUE(w->statusBar()->currentMessage().contains("cancelled in the launch preview"))
      << w->statusBar()->currentMessage().toStdString();
}

TEST(TrialLauncher, ASlurmBatchTrialShowsItsScriptFirst) {
  auto w = make_window();
  config::TrialConfig c = own_config(3);
  c.launcher = config::Launcher::Slurm;
  c.slurm_mode = config::SlurmMode::Sbatch;
  c.slurm_partition = "gpu";
  c.slurm_dir = "/shared/tb";
  w->form()->setConfig(c);
  ASSERT_EQ(w->form()->validateAndShow(), 0);
  EXPECT_FALSE(w->runTrial());
  LaunchPreviewDialog* preview = w->launcher()->pendingPreview();
  ASSERT_NE(preview, nullptr);
  EXPECT_EQ(preview->windowTitle(), "Submit a batch job to 1 SLURM node(s) of partition gpu?");
  const QString text = preview->previewText();
  EXPECT_TRUE(text.contains("#SBATCH --partition=gpu")) << text.toStdString();  // the script, whole
  EXPECT_TRUE(text.contains("exec srun --kill-on-bad-exit=1")) << text.toStdString();
  EXPECT_TRUE(text.contains("sbatch --parsable --wait /shared/tb/")) << text.toStdString();
  EXPECT_TRUE(text.contains("TUNEBENCH_EVENT_TOKEN='<token>'")) << text.toStdString();  // never the token
  answer(preview, QDialogButtonBox::RejectRole);
  TB_WAIT_FOR(w->launcher()->pendingPreview() == nullptr, kTimeoutMs);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->trialsModel()->rowCount(), 0);
}

TEST(TrialLauncher, ALocalTrialOfTheUsersOwnStartsWithoutAPreview) {
  auto w = make_window();
  w->form()->setConfig(own_config(3));
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  EXPECT_TRUE(w->runTrial());
  EXPECT_EQ(w->launcher()->pendingPreview(), nullptr);
  ASSERT_EQ(w->trialsModel()->rowCount(), 1);
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->record(0).status, protocol::TrialStatus::Done);
}

TEST(TrialNames, DefaultNamesAreUniqueAndSayWhatDiffers) {
  // Two trials of different strategies both got "tiny on CPU": "Why tiny on CPU differs from tiny
  // on CPU" and duplicate legend entries followed.
  auto w = make_window();
  w->form()->applyPreset(QStringLiteral("cpu-tiny"));
  config::TrialConfig single = w->form()->config();
  single.steps = 3;
  single.warmup = 1;
  config::TrialConfig ddp = single;
  ddp.strategy = config::Strategy::Ddp;
  ddp.world_size = 2;
  ddp.bucket_mb = 5;
  QSignalSpy finished(w.get(), &MainWindow::trialFinished);
  for (const config::TrialConfig& c : {single, ddp, single}) {
    w->form()->setConfig(c);  // the name field still says the preset's "tiny on CPU"
    ASSERT_TRUE(w->runTrial());
  }
  TB_WAIT_FOR(finished.size() == 3, 3 * kTimeoutMs);
  const QString a = QString::fromStdString(w->trialsModel()->record(0).config.name);
  const QString b = QString::fromStdString(w->trialsModel()->record(1).config.name);
  const QString c = QString::fromStdString(w->trialsModel()->record(2).config.name);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_TRUE(b.contains(QStringLiteral("DDP"), Qt::CaseInsensitive)) << b.toStdString();
  EXPECT_TRUE(b.contains(QStringLiteral("x2"))) << b.toStdString();
  EXPECT_TRUE(b.contains(QStringLiteral("bucket_mb"))) << b.toStdString();  // a knob that differs
  // A name the user typed is kept (made unique only when it is taken).
  config::TrialConfig named = single;
  named.name = "my run";
  w->form()->setConfig(named);
  ASSERT_TRUE(w->runTrial());
  TB_WAIT_FOR(finished.size() == 4, kTimeoutMs);
  EXPECT_EQ(w->trialsModel()->record(3).config.name, "my run");
}
