#include <gtest/gtest.h>

#include <cstdlib>

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTest>
#include <QWheelEvent>

#include "tests/ui/windows/window_test_util.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

TEST(TrialForm, HasAFieldWithATooltipForEveryKnob) {
  TrialForm form;
  for (const auto& knob : config::knobs()) {
    KnobField* f = form.field(QString::fromStdString(knob.key));
    ASSERT_NE(f, nullptr) << knob.key;
    const QString tip = f->editor()->toolTip();
    EXPECT_TRUE(tip.contains(QString::fromStdString(knob.help).toHtmlEscaped())) << knob.key;
    if (!knob.forum_claim.empty()) {
      EXPECT_TRUE(tip.contains("Tests the forum claim")) << knob.key;
    }
  }
  EXPECT_TRUE(form.field("compile")->editor()->toolTip().contains("no torch.compile"));
}

TEST(TrialForm, RoundTripsAConfig) {
  TrialForm form;
  auto c = *config::trial_preset("7b-ddp-no-p2p");
  form.setConfig(c);
  EXPECT_EQ(form.config(), c);
}

TEST(TrialForm, ProblemsAppearNextToTheirFields) {
  TrialForm form;
  form.setDevices(cpu_machine());
  form.applyPreset("cpu-tiny");
  EXPECT_EQ(form.validateAndShow(), 0);
  form.field("warmup")->setText("50");  // more warm-up than steps
  form.field("lr")->setText("fast");    // not a number
  EXPECT_EQ(form.validateAndShow(), 2);
  EXPECT_TRUE(form.field("warmup")->problem().contains("warm-up"));
  EXPECT_TRUE(form.field("warmup")->editor()->property("invalid").toBool());
  EXPECT_TRUE(form.field("warmup")->findChild<QLabel*>("problem")->isVisibleTo(&form));
  EXPECT_FALSE(form.field("lr")->problem().isEmpty());
  EXPECT_TRUE(form.field("steps")->problem().isEmpty());
  form.field("warmup")->setText("3");
  form.field("lr")->setText("0.001");
  EXPECT_EQ(form.validateAndShow(), 0);
  EXPECT_FALSE(form.field("warmup")->editor()->property("invalid").toBool());
}

// A refused Run scrolls the form to the field that says why (the Precision group's knob here lies
// far below the fold of a short dock).
TEST(TrialForm, TheFirstProblemIsScrolledIntoView) {
  QScrollArea scroll;
  auto* form = new TrialForm;
  scroll.setWidget(form);
  scroll.setWidgetResizable(true);
  scroll.resize(400, 300);
  scroll.show();
  form->setDevices(cpu_machine());
  form->applyPreset("cpu-tiny");
  form->field("optimizer_overlap")->setText("true");
  form->field("grad_clip")->setText("1.0");  // clipping needs every gradient first
  ASSERT_GT(form->validateAndShow(), 0);
  KnobField* bad = form->field("optimizer_overlap");
  ASSERT_FALSE(bad->problem().isEmpty());
  const auto inView = [&] {
    const QPoint top = bad->mapTo(scroll.viewport(), QPoint(0, 0));
    return top.y() >= 0 && top.y() + bad->height() <= scroll.viewport()->height();
  };
  ASSERT_FALSE(inView()) << "the test needs the field below the fold";
  form->revealFirstProblem();
  EXPECT_TRUE(inView());
}

TEST(TrialForm, DevicesLimitTheWorldSize) {
  TrialForm form;
  form.setDevices(one_gpu_machine());
  form.applyPreset("7b-ddp");  // two GPUs
  EXPECT_TRUE(form.field("world_size")->problem().contains("1 GPU")) << form.field("world_size")->problem().toStdString();
  form.setDevices(cpu_machine());
  EXPECT_TRUE(form.field("device")->problem().contains("no GPU")) << form.field("device")->problem().toStdString();
  form.applyPreset("cpu-tiny-ddp");
  EXPECT_EQ(form.validateAndShow(), 0);
  form.field("world_size")->setText("9");
  form.validateAndShow();
  EXPECT_TRUE(form.field("world_size")->problem().contains("at most 8")) << form.field("world_size")->problem().toStdString();
}

TEST(TrialForm, PresetModelsLockTheDimensions) {
  TrialForm form;
  auto* model = qobject_cast<QComboBox*>(form.field("model")->editor());
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(form.field("dim")->isEnabled());
  model->setCurrentText("7b");
  EXPECT_EQ(form.field("dim")->text(), "4096");
  model->setCurrentText("custom");
  EXPECT_TRUE(form.field("dim")->isEnabled());
}

TEST(TrialForm, WhereTheRanksRunIsPartOfTheForm) {
  // The "Where" group comes from the launcher knobs: hosts typed as text, stored as the config's.
  TrialForm form;
  auto c = *config::trial_preset("cpu-tiny");
  c.strategy = config::Strategy::Ddp;
  c.world_size = 3;
  c.launcher = config::Launcher::Ssh;
  ASSERT_FALSE(config::parse_ssh_hosts("alice@gpu1:2222 ranks=2; gpu2 ranks=1 CUDA_VISIBLE_DEVICES=1", c.ssh_hosts));
  form.setConfig(c);
  ASSERT_NE(form.field("launcher"), nullptr);
  ASSERT_NE(form.field("ssh_hosts"), nullptr);
  EXPECT_EQ(form.field("ssh_hosts")->text(), "alice@gpu1:2222 ranks=2; gpu2 ranks=1 CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(form.config(), c);
  form.field("ssh_hosts")->setText("gpu1 ranks=2");  // 2 ranks for a world of 3
  EXPECT_EQ(form.validateAndShow(), 1);
  EXPECT_TRUE(form.field("ssh_hosts")->problem().contains("add up to 2")) << form.field("ssh_hosts")->problem().toStdString();
}

namespace {
// As the user does it: pick from the combo box, or type into the line edit.
void choose(TrialForm& form, const char* key, const QString& text) {
  QWidget* editor = form.field(key)->editor();
  if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    ASSERT_GE(combo->findText(text), 0) << key;
    combo->setCurrentIndex(combo->findText(text));
  } else {
    auto* edit = qobject_cast<QLineEdit*>(editor);
    ASSERT_NE(edit, nullptr) << key;
    edit->clear();
    QTest::keyClicks(edit, text);
  }
}
}  // namespace

// Issue 14: the Where group shows the fields of the chosen launcher only, and shows the others
// again when the choice changes (their values kept).
TEST(TrialForm, TheWhereGroupShowsOnlyTheChosenLaunchersFields) {
  TrialForm form;
  form.setDevices(cpu_machine());
  form.applyPreset("cpu-tiny-ddp");
  form.show();
  const QStringList ssh = {"ssh_hosts", "ssh_command", "master_addr"};
  const QStringList slurm = {"slurm_mode", "slurm_nodes", "slurm_gpus_per_node", "slurm_partition",
                             "slurm_account", "slurm_time", "slurm_dir", "event_host"};
  const QStringList remote = {"remote_worker", "remote_env"};
  auto shown = [&](const QString& key) {
    KnobField* f = form.field(key);
    // The field and its label: the whole row goes.
    auto* label = qobject_cast<QLabel*>(
        static_cast<QFormLayout*>(f->parentWidget()->layout())->labelForField(f));
    EXPECT_NE(label, nullptr) << key.toStdString();
    const bool visible = f->isVisibleTo(&form);
    EXPECT_EQ(label && label->isVisibleTo(&form), visible) << key.toStdString();
    EXPECT_EQ(form.isFieldShown(key), visible) << key.toStdString();
    return visible;
  };
  auto expect = [&](const QStringList& keys, bool visible, const char* launcher) {
    for (const QString& k : keys) EXPECT_EQ(shown(k), visible) << k.toStdString() << " with " << launcher;
  };
  ASSERT_TRUE(shown("launcher"));
  // Local: no SSH host list, no SLURM fields, nothing remote.
  expect(ssh, false, "local");
  expect(slurm, false, "local");
  expect(remote, false, "local");
  EXPECT_TRUE(shown("world_size"));
  // SSH: its hosts and the remote worker, no SLURM fields.
  choose(form, "launcher", "ssh");
  expect(ssh, true, "ssh");
  expect(remote, true, "ssh");
  expect(slurm, false, "ssh");
  choose(form, "ssh_hosts", "gpu1 ranks=1; gpu2 ranks=1");
  // SLURM: its fields, no SSH hosts.
  choose(form, "launcher", "slurm");
  expect(slurm, true, "slurm");
  expect(remote, true, "slurm");
  expect(ssh, false, "slurm");
  // Back to local: hidden again, the hosts typed before kept for when SSH comes back.
  choose(form, "launcher", "local");
  expect(ssh, false, "local");
  expect(slurm, false, "local");
  choose(form, "launcher", "ssh");
  EXPECT_EQ(form.field("ssh_hosts")->text(), "gpu1 ranks=1; gpu2 ranks=1");
  EXPECT_EQ(form.config().ssh_hosts.size(), 2u);
  // A stored SSH trial loaded into the form shows its hosts at once.
  config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  c.launcher = config::Launcher::Ssh;
  ASSERT_FALSE(config::parse_ssh_hosts("a ranks=1; b ranks=1", c.ssh_hosts));
  form.setConfig(c);
  expect(ssh, true, "ssh (setConfig)");
  expect(slurm, false, "ssh (setConfig)");
}

// A problem in a field the launcher hides is still said (in the summary), not lost with its row.
TEST(TrialForm, AProblemOfAHiddenWhereFieldIsShownInTheSummary) {
  TrialForm form;
  form.setDevices(cpu_machine());
  form.applyPreset("cpu-tiny-ddp");
  choose(form, "launcher", "ssh");
  choose(form, "ssh_hosts", "gpu1:99x ranks=2");  // does not parse, whatever the launcher
  ASSERT_GE(form.validateAndShow(), 1);
  EXPECT_TRUE(form.field("ssh_hosts")->problem().contains("bad port"));
  choose(form, "launcher", "local");
  ASSERT_EQ(form.validateAndShow(), 1);
  auto* summary = form.findChild<QLabel*>("summary");
  ASSERT_NE(summary, nullptr);
  EXPECT_TRUE(summary->text().contains("SSH hosts: ")) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains("bad port")) << summary->text().toStdString();
}

TEST(TrialForm, ModelFromAHuggingFaceConfigFillsTheModelFields) {
  TrialForm form;
  form.setDevices(one_gpu_machine());
  form.applyPreset("7b-single");
  ASSERT_NE(form.findChild<QPushButton*>("modelFromHfConfig"), nullptr);
  const QString dir = QString::fromStdString(::testing::TempDir());
  // Qwen2.5-7B's config: its preset, with the q/k/v biases named as not modelled.
  const QString qwen = dir + "/hf-qwen.json";
  {
    QFile f(qwen);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
      "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "rope_theta": 1000000.0,
      "tie_word_embeddings": false, "rms_norm_eps": 1e-05})");
  }
  QString report;
  ASSERT_TRUE(form.loadHfConfig(qwen, &report)) << report.toStdString();
  EXPECT_EQ(form.field("model")->text(), "qwen2.5-7b");
  EXPECT_EQ(form.field("kv_heads")->text(), "4");
  EXPECT_EQ(form.field("heads")->text(), "28");
  EXPECT_FALSE(form.field("kv_heads")->isEnabled()) << "a preset model locks its dimensions";
  EXPECT_TRUE(report.contains("model_type 'qwen2'")) << report.toStdString();
  EXPECT_EQ(form.validateAndShow(), 0);
  EXPECT_EQ(form.config().micro_batch, 1) << "the rest of the trial is kept";
  if (const char* shots = std::getenv("TUNEBENCH_SCREENSHOT_DIR")) {  // a picture for the docs
    form.resize(480, 1500);
    form.grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/trial-form-qwen.png"));
  }
  // A custom shape unlocks the fields; a file that is no model config changes nothing.
  const QString custom = dir + "/hf-custom.json";
  {
    QFile f(custom);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"hidden_size": 2560, "intermediate_size": 6912, "num_hidden_layers": 8, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 50304, "tie_word_embeddings": true})");
  }
  ASSERT_TRUE(form.loadHfConfig(custom, &report)) << report.toStdString();
  EXPECT_EQ(form.field("model")->text(), "custom");
  EXPECT_TRUE(form.field("kv_heads")->isEnabled());
  EXPECT_EQ(form.config().dims.head_dim(), 80);
  EXPECT_TRUE(form.config().dims.tie_embeddings);
  const QString bad = dir + "/hf-unrelated.json";
  {
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"model": "7b", "strategy": "ddp"})");
  }
  EXPECT_FALSE(form.loadHfConfig(bad, &report));
  EXPECT_TRUE(report.contains("not a Hugging Face model config")) << report.toStdString();
  EXPECT_EQ(form.field("model")->text(), "custom");
}

TEST(TrialForm, GroupedQueryAttentionThatDoesNotDivideIsShownAtItsField) {
  TrialForm form;
  form.setDevices(one_gpu_machine());
  form.applyPreset("llama3.1-8b-single");
  EXPECT_EQ(form.validateAndShow(), 0);
  form.field("model")->setText("custom");
  form.field("kv_heads")->setText("5");
  EXPECT_GE(form.validateAndShow(), 1);
  EXPECT_TRUE(form.field("kv_heads")->problem().contains("does not divide"))
      << form.field("kv_heads")->problem().toStdString();
}

namespace {
// Turns the mouse wheel once (one notch down) over `target`'s centre, as the platform delivers it.
void wheel_over(QWidget* target) {
  const QPointF local(target->width() / 2.0, target->height() / 2.0);
  QWheelEvent event(local, target->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &event);
}
}  // namespace

TEST(TrialFormDefects, TheWheelOverAnUnfocusedFieldScrollsTheFormInstead) {
  // Scrolling the form with the wheel turned Ranks from 1 to 0 when the pointer passed over it.
  auto w = make_window();
  auto* scroll = qobject_cast<QScrollArea*>(w->form()->parentWidget()->parentWidget());
  ASSERT_NE(scroll, nullptr);
  scroll->verticalScrollBar()->setValue(0);
  w->form()->applyPreset(QStringLiteral("cpu-tiny"));
  auto* ranks = qobject_cast<QSpinBox*>(w->form()->field(QStringLiteral("world_size"))->editor());
  auto* strategy = qobject_cast<QComboBox*>(w->form()->field(QStringLiteral("strategy"))->editor());
  ASSERT_NE(ranks, nullptr);
  ASSERT_NE(strategy, nullptr);
  ASSERT_GT(scroll->verticalScrollBar()->maximum(), 0) << "the form should need scrolling in a 1400x900 window";
  w->form()->setFocus();
  ASSERT_FALSE(ranks->hasFocus());
  const int before = ranks->value();
  wheel_over(ranks);
  EXPECT_EQ(ranks->value(), before);
  EXPECT_GT(scroll->verticalScrollBar()->value(), 0);  // the form scrolled
  const QString chosen = strategy->currentText();
  wheel_over(strategy);
  EXPECT_EQ(strategy->currentText(), chosen);
  // A focused field still takes the wheel: the user clicked into it to change it.
  ranks->setFocus();
  ASSERT_TRUE(QTest::qWaitFor([&] { return ranks->hasFocus(); }, 2000));
  ranks->setValue(3);
  wheel_over(ranks);
  EXPECT_EQ(ranks->value(), 2);
}

TEST(TrialFormDefects, UnitsAgreeWithTheirNumber) {
  // "1 processes", "1 micro-steps", "1 sequences".
  TrialForm form;
  form.applyPreset(QStringLiteral("cpu-tiny"));
  for (const char* key : {"world_size", "grad_accum", "micro_batch"}) {
    auto* spin = qobject_cast<QSpinBox*>(form.field(QString::fromLatin1(key))->editor());
    ASSERT_NE(spin, nullptr) << key;
    spin->setValue(1);
    const QString one = spin->suffix();
    spin->setValue(2);
    const QString two = spin->suffix();
    // " process" / " processes", " micro-step" / " micro-steps": the plural is the singular and more.
    EXPECT_NE(one, two) << key << ": 1" << one.toStdString() << ", 2" << two.toStdString();
    EXPECT_TRUE(two.startsWith(one)) << key << ": 1" << one.toStdString() << ", 2" << two.toStdString();
  }
}
