// HardwareStrip: one line under the trial's plots with what the hardware said of its memory: the
// measured categories of the latest memory-sampled step beside the prediction's terms for the
// trial's configuration (predict::compare_memory, predict::memory_line), or the worker's reason
// there are none ("memory categories unknown on CPU: ..."), or an out-of-memory explained
// (predict::explain_oom). It computes nothing of its own: the core functions do.
#pragma once

#include <optional>

#include <QLabel>

#include "core/config/trial_config.h"
#include "core/predict/memory_model.h"
#include "core/protocol/events.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class HardwareStrip : public QLabel {
  Q_OBJECT
 public:
  explicit HardwareStrip(QWidget* parent = nullptr);
  void addEvents(const EventBatch& batch);
  void clear();

 private:
  void refresh();

  std::optional<config::TrialConfig> m_config;
  predict::MemoryOptions m_options;
  int64_t m_deviceMemory = 0;
  std::optional<predict::MemoryPrediction> m_prediction;  // of m_config, computed once
  std::optional<protocol::Step> m_latest;                   // the latest memory-sampled step (largest rank)
  QString m_reason;                                         // the worker's memory-categories warning
  QString m_oom;                                            // an out-of-memory explained
};

}  // namespace tunebench::ui
