// WhatIfDialog: a measured trial next to its what-if. Change the GPU model, the GPU
// count, the link or a few knobs and see the predicted step, tokens/s per GPU and in all, memory
// and fit, the communication floor and "can N GPUs beat one here?", beside what the trial measured.
// Predictions are core/predict's, calibrated on the trial and the session's other trials.
#pragma once

#include <memory>
#include <vector>

#include <QDialog>

#include "core/predict/predictor.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace tunebench::ui {

class TargetPicker;

class WhatIfDialog : public QDialog {
  Q_OBJECT
 public:
  // `trial` must have a config; `session` are the session's other measured trials and probes
  // (copied: the dialog outlives a reload of the session).
  WhatIfDialog(predict::MeasuredTrial trial, std::vector<predict::MeasuredTrial> session, QWidget* parent = nullptr);

  // The what-if as the controls set it.
  predict::Scenario scenario() const;
  const predict::Prediction& prediction() const { return m_prediction; }
  QTableWidget* table() const { return m_table; }
  QComboBox* gpuCombo() const;
  QSpinBox* gpuCount() const;
  QComboBox* linkCombo() const;
  QComboBox* strategyCombo() const { return m_strategy; }
  QSpinBox* accumulation() const { return m_accum; }
  QLabel* verdict() const { return m_verdict; }

 public slots:
  void recompute();

 private:
  void fillMeasured();
  // Strategy single fixes the GPU count at 1; another strategy takes the count back.
  void followStrategy();
  // The "Fits the GPU?" cell: the verdict, what is needed per device and the capacity.
  QString fitText(const predict::Prediction& p) const;

  predict::MeasuredTrial m_trial;
  std::vector<predict::MeasuredTrial> m_session;
  std::vector<const predict::MeasuredTrial*> m_evidence;  // the trial first, then the session
  predict::Prediction m_prediction;
  TargetPicker* m_picker = nullptr;
  QComboBox* m_strategy = nullptr;
  QSpinBox* m_microBatch = nullptr;
  QSpinBox* m_accum = nullptr;
  QCheckBox* m_checkpointing = nullptr;
  QComboBox* m_amp = nullptr;
  QComboBox* m_compression = nullptr;
  QTableWidget* m_table = nullptr;
  QLabel* m_verdict = nullptr;
  QLabel* m_basis = nullptr;
  int m_countBeforeSingle = 2;  // the GPU count to return to when the strategy leaves single
};

}  // namespace tunebench::ui
