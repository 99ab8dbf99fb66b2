// PredictionPanel: what the trial in the form will need and how fast it will run, before Run:
// peak memory per GPU against the chosen GPUs' memory (per rank against the host's for CPU ranks)
// with a fit verdict and a warning when it will not fit (a warning, never a block), the predicted
// step and tokens/s, the communication floor, whether the GPUs beat one, and the link between the
// ranks with its source (a link probe, trials, or the catalogue; CPU ranks: a probe or trials
// only). Which GPUs, how many and over which link is its TargetPicker's (the detected GPUs by
// default). It shows core/predict's answer for predict::scenario_for(config, target), the same
// call `tunebench-cli predict` makes; it computes nothing itself.
#pragma once

#include <vector>

#include <QWidget>

#include "core/config/trial_config.h"
#include "core/predict/predictor.h"
#include "core/predict/target.h"
#include "ui/runner/device_inventory.h"

class QAction;
class QLabel;
class QProgressBar;
class QToolButton;

namespace tunebench::ui {

class TargetPicker;

class PredictionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit PredictionPanel(QWidget* parent = nullptr);

  // Measured trials (and link probes) of the session: they calibrate the prediction. `notUsed`:
  // the trials left out and why ("X: not used: its model is unknown ..."), said under the basis.
  void setEvidence(std::vector<const predict::MeasuredTrial*> evidence, std::vector<std::string> notUsed = {});
  // Predicts `config` and shows it: on the picker's GPUs when it runs on GPUs (device cuda, or auto
  // on a machine with GPUs), else on this host's CPU.
  void showPrediction(const config::TrialConfig& config, const DeviceInventory& devices);
  // No prediction, and why (a form that validation refuses: the run would not start either).
  void showRefused(const QString& why);
  // The picker's GPU before the user chooses: the detected one (and its count) when this machine
  // has GPUs the catalogue knows, else `fallback` (the user's last choice, kept for later calls).
  void setDefaultTarget(const DeviceInventory& devices, const predict::Target& fallback = {});

  const predict::Prediction& prediction() const { return m_prediction; }
  // The fit shown (per GPU, or for all CPU ranks together against the host's memory).
  predict::Fit fit() const { return m_prediction.fit; }
  QString warningText() const;
  QString summaryText() const;
  // The link between the ranks and where its figures come from ("" for one rank).
  QString linkText() const;
  // A button under the link line for an action ("Measure the link…").
  void setMeasureLinkAction(QAction* action);
  TargetPicker* picker() const { return m_picker; }

  // Tests: pretend the host has this much memory (0: read it).
  void setHostMemoryBytes(int64_t bytes) { m_hostMemory = bytes; }

 signals:
  // The user chose another GPU, count or link (the controller remembers it and predicts again).
  void targetChanged();

 private:
  void showNoPrediction();  // m_problem in the memory line, the rest hidden
  std::vector<const predict::MeasuredTrial*> m_evidence;
  std::vector<std::string> m_notUsed;
  // What predict::scenario_for adjusted ("2 GPUs with strategy single: predicting ddp"), said under
  // the prediction as `tunebench-cli predict` says it on stderr.
  std::vector<std::string> m_adjusted;
  predict::Prediction m_prediction;
  QString m_problem;  // the scenario could not be built (an unknown GPU): said instead of a prediction
  int64_t m_hostMemory = 0;
  int m_formWorld = 0;  // the form's world size the picker's count last followed
  bool m_defaulted = false;   // the user chose, or the detected GPUs were applied
  predict::Target m_fallback;  // the last choice, when nothing is detected
  TargetPicker* m_picker = nullptr;
  QLabel* m_pickerNote = nullptr;
  QLabel* m_memory = nullptr;
  QProgressBar* m_memoryBar = nullptr;
  QLabel* m_warning = nullptr;
  QLabel* m_step = nullptr;
  QLabel* m_scaling = nullptr;
  QLabel* m_link = nullptr;
  QToolButton* m_measureLink = nullptr;
  QLabel* m_basis = nullptr;
};

}  // namespace tunebench::ui
