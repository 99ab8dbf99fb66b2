// PredictionPanel: what the trial in the form will need and how fast it will run, before Run:
// peak memory per GPU against the detected memory, with a warning when it will not fit
// (a warning, never a block), the predicted step and tokens/s, the communication floor, whether
// the GPUs beat one, and the link between the ranks with its source (a link probe, trials, or the
// catalogue; CPU ranks: a probe or trials only). It shows core/predict's answer; it computes nothing itself.
#pragma once

#include <vector>

#include <QWidget>

#include "core/config/trial_config.h"
#include "core/predict/predictor.h"
#include "ui/runner/device_inventory.h"

class QAction;
class QLabel;
class QProgressBar;
class QToolButton;

namespace tunebench::ui {

class PredictionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit PredictionPanel(QWidget* parent = nullptr);

  // Measured trials (and link probes) of the session: they calibrate the prediction.
  void setEvidence(std::vector<const predict::MeasuredTrial*> evidence);
  // Predicts `config` on this machine's devices and shows it.
  void showPrediction(const config::TrialConfig& config, const DeviceInventory& devices);

  const predict::Prediction& prediction() const { return m_prediction; }
  // The fit shown (per GPU, or for all CPU ranks together against the host's memory).
  predict::Fit fit() const { return m_fit; }
  QString warningText() const;
  QString summaryText() const;
  // The link between the ranks and where its figures come from ("" for one rank).
  QString linkText() const;
  // A button under the link line for an action ("Measure the link…").
  void setMeasureLinkAction(QAction* action);

  // The scenario the form's config means on this machine (the GPU NVML reported, its memory).
  static predict::Scenario scenarioFor(const config::TrialConfig& config, const DeviceInventory& devices);
  // Physical memory of this host (the CPU device's memory), 0 when unknown.
  static int64_t hostMemoryBytes();
  // Tests: pretend the host has this much memory (0: read it).
  void setHostMemoryBytes(int64_t bytes) { m_hostMemory = bytes; }

 private:
  std::vector<const predict::MeasuredTrial*> m_evidence;
  predict::Prediction m_prediction;
  predict::Fit m_fit = predict::Fit::Fits;
  int64_t m_hostMemory = 0;
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
