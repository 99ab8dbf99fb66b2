#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QTest>

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
