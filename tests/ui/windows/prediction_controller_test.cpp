// The Prediction dock follows the form: a form that validation refuses gets no prediction, with the
// reason, instead of a figure for a trial that could not run (issue 44); fixed, it predicts again.
#include <gtest/gtest.h>

#include <QLabel>
#include <QSpinBox>

#include "tests/ui/windows/window_test_util.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/prediction_panel.h"
#include "ui/windows/trial_form.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

TEST(PredictionController, AFormThatValidationRefusesGetsNoPrediction) {
  auto w = make_window();  // a CPU machine: 7B DDP is predicted for GPUs it does not have, not refused
  auto* panel = w->findChild<PredictionPanel*>(QStringLiteral("predictionPanel"));
  ASSERT_NE(panel, nullptr);
  auto* memory = panel->findChild<QLabel*>(QStringLiteral("predictedMemory"));
  ASSERT_NE(memory, nullptr);
  w->form()->applyPreset(QStringLiteral("7b-ddp"));
  ASSERT_TRUE(panel->prediction().step.has_value());

  auto* microBatch = qobject_cast<QSpinBox*>(w->form()->field(QStringLiteral("micro_batch"))->editor());
  ASSERT_NE(microBatch, nullptr);
  microBatch->setValue(0);  // as the user's arrow keys or typing do
  ASSERT_FALSE(w->form()->configProblems().empty());
  EXPECT_FALSE(panel->prediction().step.has_value());
  EXPECT_TRUE(memory->text().startsWith(QStringLiteral("No prediction: the form has"))) << memory->text().toStdString();
  EXPECT_TRUE(memory->text().contains(QStringLiteral("micro_batch"))) << memory->text().toStdString();

  microBatch->setValue(2);
  EXPECT_TRUE(w->form()->configProblems().empty());
  ASSERT_TRUE(panel->prediction().step.has_value());
  EXPECT_FALSE(memory->text().startsWith(QStringLiteral("No prediction")));
}
