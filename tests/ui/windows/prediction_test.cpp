// The predictions in the GUI (issue 11): the Prediction panel under the trial form warns before Run
// when a configuration will not fit (GPU or host memory), and the What-if dialog puts a recorded
// H200 trial next to its prediction on other GPUs and links.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QSpinBox>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>

#include "core/predict/render.h"
#include "core/store/session_store.h"
#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/what_if_dialog.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

DeviceInventory two_4090s() {
  DeviceInventory d = cpu_machine();
  for (int i = 0; i < 2; ++i) d.gpus.push_back({i, QStringLiteral("NVIDIA GeForce RTX 4090"), qint64(24564) << 20});
  return d;
}

predict::MeasuredTrial recorded(const char* file) {
  predict::Evidence e;
  e.add(file, std::make_shared<protocol::TrialLog>(
                  protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) + "/gpu/" + file)));
  return e.trials().front();
}

}  // namespace

TEST(PredictionPanel, WarnsBeforeRunWhenSevenBillionWillNotFitTwo4090s) {
  PredictionPanel panel;
  panel.showPrediction(*config::trial_preset("7b-ddp"), two_4090s());
  EXPECT_EQ(panel.fit(), predict::Fit::DoesNotFit);
  EXPECT_TRUE(panel.warningText().contains("Will not fit")) << panel.warningText().toStdString();
  EXPECT_TRUE(panel.findChild<QLabel*>("predictedStep")->text().contains("tokens/s"));
  EXPECT_TRUE(panel.findChild<QLabel*>("predictedScaling")->text().contains("2 GPUs"));

  config::TrialConfig one_b = *config::trial_preset("7b-fsdp");
  config::set_knob(one_b, "model", "1b");
  one_b.checkpointing = true;
  panel.showPrediction(one_b, two_4090s());
  EXPECT_EQ(panel.fit(), predict::Fit::Fits) << panel.summaryText().toStdString();
  EXPECT_TRUE(panel.warningText().isEmpty());
}

TEST(PredictionPanel, CpuRanksShareTheHostsMemory) {
  // Issue 15: 7B FSDP on a 23 GB CPU machine was accepted without a word.
  PredictionPanel panel;
  panel.setHostMemoryBytes(qint64(23) << 30);
  config::TrialConfig c = *config::trial_preset("7b-fsdp");
  c.device = config::Device::Cpu;
  panel.showPrediction(c, cpu_machine());
  EXPECT_EQ(panel.fit(), predict::Fit::DoesNotFit);
  EXPECT_TRUE(panel.warningText().contains("2 rank(s) on this host")) << panel.warningText().toStdString();
  panel.showPrediction(*config::trial_preset("cpu-tiny-ddp"), cpu_machine());
  EXPECT_EQ(panel.fit(), predict::Fit::Fits);
}

TEST(PredictionPanel, TheWindowPredictsAsTheFormChangesAndOffersWhatIf) {
  auto w = make_window(two_4090s());
  auto* panel = w->findChild<PredictionPanel*>("predictionPanel");
  ASSERT_NE(panel, nullptr);
  ASSERT_NE(w->findChild<QDockWidget*>("predictionDock"), nullptr);
  ASSERT_NE(w->action("actionWhatIf"), nullptr);
  w->form()->applyPreset("7b-ddp");
  EXPECT_EQ(panel->fit(), predict::Fit::DoesNotFit);
  EXPECT_FALSE(panel->findChild<QLabel*>("predictedWarning")->isHidden());
  // A warning, not a block: the form itself reports no problem.
  EXPECT_EQ(w->form()->validateAndShow(), 0);
  w->form()->applyPreset("cpu-tiny");
  EXPECT_TRUE(panel->findChild<QLabel*>("predictedWarning")->isHidden());
}

TEST(WhatIfDialog, PutsARecordedTrialNextToItsPredictionOnOtherHardware) {
  WhatIfDialog dialog(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  QTableWidget* table = dialog.table();
  // The unchanged what-if is calibrated on the trial itself: close to what it measured.
  ASSERT_TRUE(dialog.prediction().step.has_value());
  const double measured = recorded("h200x2-7b-ddp-ckpt.jsonl").metrics.step_ms.median;
  EXPECT_NEAR(dialog.prediction().step->step_ms, measured, 0.15 * measured);
  EXPECT_TRUE(table->item(0, 0)->text().contains("ms"));

  dialog.gpuCombo()->setCurrentIndex(dialog.gpuCombo()->findData(QStringLiteral("rtx4090")));
  dialog.linkCombo()->setCurrentIndex(dialog.linkCombo()->findData(QStringLiteral("pcie4-nop2p")));
  EXPECT_EQ(dialog.prediction().fit, predict::Fit::DoesNotFit);
  EXPECT_TRUE(table->item(4, 1)->text().startsWith("does not fit"));
  EXPECT_TRUE(dialog.verdict()->text().contains("does not fit")) << dialog.verdict()->text().toStdString();
  EXPECT_NE(dialog.prediction().efficiency.source.find("transferred from"), std::string::npos);

  // Back on the H200 over the slow link: accumulation is what makes two GPUs pay.
  dialog.gpuCombo()->setCurrentIndex(dialog.gpuCombo()->findData(QStringLiteral("h200")));
  const double one = dialog.prediction().scaling->speedup;
  dialog.accumulation()->setValue(16);
  EXPECT_GT(dialog.prediction().scaling->speedup, one);
  EXPECT_TRUE(dialog.prediction().scaling->can_beat_single);
  dialog.gpuCount()->setValue(1);
  EXPECT_FALSE(dialog.prediction().scaling.has_value());
  EXPECT_EQ(dialog.prediction().scenario.config.strategy, config::Strategy::Single);
}

// A CPU trial (sessions/cpu-tiny.tbsession's two Gloo ranks) asked about on a GPU: its column
// and the rows say what each side runs on, never "per GPU" for the CPU ranks; a GPU trial keeps
// "per GPU".
TEST(WhatIfDialog, ACpuTrialIsNotDescribedPerGpu) {
  auto s = store::SessionStore::open(TUNEBENCH_SESSIONS_DIR "/cpu-tiny.tbsession", {store::SessionStore::Mode::ReadOnly});
  predict::Evidence e;
  e.add("cpu ddp", std::make_shared<protocol::TrialLog>(s.load_trial(2).log));
  WhatIfDialog cpu(e.trials().front(), {});
  QTableWidget* table = cpu.table();
  EXPECT_EQ(table->horizontalHeaderItem(0)->text(), QStringLiteral("measured (this trial, CPU ranks)"));
  EXPECT_TRUE(cpu.prediction().cuda);
  EXPECT_EQ(table->horizontalHeaderItem(1)->text(), QStringLiteral("what if (predicted, GPUs)"));
  EXPECT_EQ(table->verticalHeaderItem(1)->text(), QStringLiteral("Tokens/s per rank"));
  for (int r = 0; r < table->rowCount(); ++r)
    EXPECT_FALSE(table->verticalHeaderItem(r)->text().contains(QStringLiteral("GPU")))
        << table->verticalHeaderItem(r)->text().toStdString();
  WhatIfDialog gpu(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  EXPECT_EQ(gpu.table()->verticalHeaderItem(1)->text(), QStringLiteral("Tokens/s per GPU"));
  EXPECT_EQ(gpu.table()->horizontalHeaderItem(0)->text(), QStringLiteral("measured (this trial, GPUs)"));
}

// ---- issue 44: What if's figures, verdict, strategy and GPU names ----

// Two memory figures side by side ("114.4 GiB" and "fits (needs 116.0 GiB of 139.8 GiB)") read as
// one figure that disagrees with itself: each row names what it is, per GPU, and the fit names the
// device's capacity it is compared with.
TEST(WhatIfDefects, EachMemoryFigureSaysWhatItIs) {
  WhatIfDialog dialog(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  QTableWidget* table = dialog.table();
  const QString peak = table->verticalHeaderItem(3)->text();
  EXPECT_TRUE(peak.contains(QStringLiteral("allocated")) && peak.contains(QStringLiteral("per GPU")))
      << peak.toStdString();
  EXPECT_FALSE(table->verticalHeaderItem(3)->toolTip().isEmpty());
  EXPECT_FALSE(table->verticalHeaderItem(4)->toolTip().isEmpty());
  const predict::Prediction& p = dialog.prediction();
  const QString fit = table->item(4, 1)->text();
  const QString needed = QString::fromStdString(predict::format_bytes(double(p.memory.device_needed_bytes)));
  const QString capacity = QString::fromStdString(predict::format_bytes(double(p.device_memory_bytes)));
  EXPECT_TRUE(fit.contains(needed + QStringLiteral(" per GPU"))) << fit.toStdString();
  EXPECT_TRUE(fit.contains(QStringLiteral("the peak +"))) << fit.toStdString();
  EXPECT_TRUE(fit.contains(QStringLiteral("the GPU's ") + capacity)) << fit.toStdString();
}

// "2 GPUs beat one here" at 1.05x for a config that does not fit: no speed verdict, in the table
// or under it.
TEST(WhatIfDefects, AConfigThatDoesNotFitGetsNoSpeedVerdict) {
  WhatIfDialog dialog(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  dialog.gpuCombo()->setCurrentIndex(dialog.gpuCombo()->findData(QStringLiteral("rtx4090")));
  dialog.linkCombo()->setCurrentIndex(dialog.linkCombo()->findData(QStringLiteral("pcie4-nop2p")));
  ASSERT_EQ(dialog.prediction().fit, predict::Fit::DoesNotFit);
  const QString verdict = dialog.verdict()->text();
  EXPECT_TRUE(verdict.contains(QStringLiteral("does not fit"))) << verdict.toStdString();
  EXPECT_FALSE(verdict.contains(QStringLiteral("beat one"))) << verdict.toStdString();
  EXPECT_FALSE(dialog.table()->item(7, 1)->text().endsWith(QLatin1Char('x'))) << dialog.table()->item(7, 1)->text().toStdString();
}

// Strategy single is one GPU: "single x 2" was predicted as DDP under the word "single".
TEST(WhatIfDefects, SingleIsOneGpu) {
  WhatIfDialog dialog(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  ASSERT_EQ(dialog.gpuCount()->value(), 2);
  dialog.strategyCombo()->setCurrentText(QStringLiteral("single"));
  EXPECT_EQ(dialog.gpuCount()->value(), 1);
  EXPECT_FALSE(dialog.gpuCount()->isEnabled());
  EXPECT_EQ(dialog.prediction().scenario.config.strategy, config::Strategy::Single);
  EXPECT_EQ(dialog.prediction().scenario.config.world_size, 1);
  EXPECT_FALSE(dialog.prediction().scaling.has_value());
  // Back to DDP: the count it had.
  dialog.strategyCombo()->setCurrentText(QStringLiteral("ddp"));
  EXPECT_TRUE(dialog.gpuCount()->isEnabled());
  EXPECT_EQ(dialog.gpuCount()->value(), 2);
  EXPECT_EQ(dialog.prediction().scenario.config.strategy, config::Strategy::Ddp);
  // A single trial asked about on more GPUs: DDP, said in the strategy box, not hidden under "single".
  dialog.strategyCombo()->setCurrentText(QStringLiteral("single"));
  dialog.strategyCombo()->setCurrentText(QStringLiteral("fsdp"));
  EXPECT_GE(dialog.gpuCount()->value(), 2);
  EXPECT_EQ(dialog.prediction().scenario.config.strategy, config::Strategy::Fsdp);
}

// GPU names were cut ("NVIDIA GeForce R…"): at 1280 x 760 every name reads in full.
TEST(WhatIfDefects, GpuNamesAreReadableAt1280x760) {
  WhatIfDialog dialog(recorded("h200x2-7b-ddp-ckpt.jsonl"), {});
  dialog.show();
  EXPECT_LE(dialog.width(), 1280);
  EXPECT_LE(dialog.height(), 760);
  QComboBox* gpu = dialog.gpuCombo();
  QStyleOptionComboBox option;
  option.initFrom(gpu);
  option.editable = false;
  option.frame = true;
  const QRect field = gpu->style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, gpu);
  for (int i = 0; i < gpu->count(); ++i)
    EXPECT_LE(gpu->fontMetrics().horizontalAdvance(gpu->itemText(i)), field.width())
        << gpu->itemText(i).toStdString() << " is cut to " << field.width() << " px";
}

namespace {
// The visible text of an action or menu, without the mnemonic's '&'.
QString plain(const QString& text) {
  QString t = text;
  return t.remove(QLatin1Char('&'));
}
}  // namespace

TEST(PredictionDefects, WhatIfIsInTheAnalysisMenu) {
  // The action existed but was added before the Analysis menu was made: no menu showed it.
  auto w = make_window(two_4090s());
  QMenu* analysis = w->menu(QStringLiteral("menuAnalysis"));
  ASSERT_NE(analysis, nullptr);
  QStringList texts;
  for (QAction* a : analysis->actions()) texts << plain(a->text());
  EXPECT_TRUE(texts.contains(QStringLiteral("What if…"))) << texts.join(", ").toStdString();
}

TEST(PredictionDefects, TheDockAsksWhichGpusAndDefaultsToTheDetectedOnes) {
  auto w = make_window(two_4090s());
  auto* gpu = w->findChild<QComboBox*>(QStringLiteral("predictionGpu"));
  auto* count = w->findChild<QSpinBox*>(QStringLiteral("predictionGpuCount"));
  auto* link = w->findChild<QComboBox*>(QStringLiteral("predictionLink"));
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(count, nullptr);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(gpu->currentData().toString(), QStringLiteral("rtx4090"));
  w->form()->applyPreset(QStringLiteral("7b-ddp"));
  EXPECT_EQ(count->value(), 2);
}

TEST(PredictionDefects, TheDockAndTheCliGiveOnePredictionForOneConfig) {
  // On a CPU-only machine the dock said "peak 125.5 GiB; needs 125.5 GiB" (no GPU, so the CPU
  // memory model, no "of", no verdict) where `tunebench-cli predict --preset 7b-ddp --gpu h200`
  // says 114.4 GiB of 139.8 GiB: fits.
  auto w = make_window(cpu_machine());
  auto* panel = w->findChild<PredictionPanel*>(QStringLiteral("predictionPanel"));
  ASSERT_NE(panel, nullptr);
  w->form()->applyPreset(QStringLiteral("7b-ddp"));
  auto* gpu = w->findChild<QComboBox*>(QStringLiteral("predictionGpu"));
  ASSERT_NE(gpu, nullptr);
  gpu->setCurrentIndex(gpu->findData(QStringLiteral("h200")));
  // What `tunebench-cli predict --preset 7b-ddp --gpu h200` computes.
  predict::Scenario cli;
  cli.config = *config::trial_preset("7b-ddp");
  cli.gpu = "h200";
  const predict::Prediction expected = predict::predict_scenario(cli);
  EXPECT_EQ(panel->prediction().memory.device_needed_bytes, expected.memory.device_needed_bytes);
  EXPECT_EQ(panel->prediction().memory.peak_bytes, expected.memory.peak_bytes);
  const QString memory = panel->findChild<QLabel*>(QStringLiteral("predictedMemory"))->text();
  EXPECT_TRUE(memory.contains(QStringLiteral(" of "))) << memory.toStdString();
  EXPECT_TRUE(memory.contains(QStringLiteral("fits"))) << memory.toStdString();
  ASSERT_TRUE(panel->prediction().step.has_value());
  EXPECT_NEAR(panel->prediction().step->step_ms, expected.step->step_ms, 1e-9);
  EXPECT_FALSE(panel->findChild<QLabel*>(QStringLiteral("predictedStep"))->text().contains("GPUs only"));
}

TEST(PredictionDefects, ACpuPresetSaysHowMuchOfTheHostItNeeds) {
  auto w = make_window(cpu_machine());
  auto* panel = w->findChild<PredictionPanel*>(QStringLiteral("predictionPanel"));
  ASSERT_NE(panel, nullptr);
  w->form()->applyPreset(QStringLiteral("cpu-tiny-ddp"));
  const QString memory = panel->findChild<QLabel*>(QStringLiteral("predictedMemory"))->text();
  EXPECT_TRUE(memory.contains(QStringLiteral(" of "))) << memory.toStdString();
  EXPECT_TRUE(memory.contains(QStringLiteral("fits"))) << memory.toStdString();
  // The GPU picker does not apply to CPU ranks.
  auto* gpu = w->findChild<QComboBox*>(QStringLiteral("predictionGpu"));
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->isEnabled());
}

// ---- issue 44: which trials calibrate the predictions ----
TEST(PredictionDefects, ATrialCanBeKeptOutOfThePredictionsFromTheTrialMenu) {
  QTemporaryDir dir;
  const QString path = copy_of(dir, QStringLiteral(TUNEBENCH_SESSIONS_DIR "/h200-7b.tbsession"));
  auto w = make_window();
  w->sessionActions()->openSession(path);
  TB_WAIT_FOR(w->trialsModel()->rowCount() > 0, kTimeoutMs);
  PredictionController* prediction = w->prediction();
  TB_WAIT_FOR(prediction->loading() == 0 && !prediction->evidence().trials().empty(), kTimeoutMs);
  const size_t all = prediction->evidence().trials().size();

  QAction* use = nullptr;
  for (QAction* a : w->menu(QStringLiteral("menuTrial"))->actions())
    if (plain(a->text()) == QStringLiteral("Use for predictions")) use = a;
  ASSERT_NE(use, nullptr);
  w->trialsView()->selectRow(0);
  ASSERT_TRUE(use->isEnabled());
  EXPECT_TRUE(use->isChecked());
  const QString id = w->trialsModel()->record(0).id;

  use->trigger();  // unticked: kept out, stored as a tag, said under the prediction
  EXPECT_TRUE(w->trialsModel()->record(0).tags.contains(QStringLiteral("no-calibration")));
  TB_WAIT_FOR(prediction->evidence().trials().size() == all - 1, kTimeoutMs);
  EXPECT_FALSE(use->isChecked());
  auto* basis = w->findChild<QLabel*>(QStringLiteral("predictionBasis"));
  ASSERT_NE(basis, nullptr);
  EXPECT_TRUE(basis->text().contains(QStringLiteral("kept out of predictions"))) << basis->text().toStdString();

  // The tag is in the file: the session reopened keeps the trial out.
  QTemporaryDir other;
  w->sessionActions()->openSession(copy_of(other, path));
  TB_WAIT_FOR(w->trialsModel()->rowOf(id) >= 0, kTimeoutMs);
  TB_WAIT_FOR(prediction->loading() == 0 && prediction->evidence().trials().size() == all - 1, kTimeoutMs);

  w->trialsView()->selectRow(w->trialsModel()->rowOf(id));
  EXPECT_FALSE(use->isChecked());
  use->trigger();  // ticked again: it calibrates again
  TB_WAIT_FOR(prediction->evidence().trials().size() == all, kTimeoutMs);
  EXPECT_FALSE(basis->text().contains(QStringLiteral("kept out of predictions")));
}
