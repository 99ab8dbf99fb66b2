// TargetPicker: the GPUs a prediction is for — a GPU model of the hardware catalogue, how many,
// and the link between them — as a predict::Target, the three inputs `tunebench-cli predict`
// takes as --gpu, --gpus and --link. The Prediction dock and the What-if dialog share it, and
// both hand its Target to predict::scenario_for, as the CLI does.
#pragma once

#include <QWidget>

#include "core/predict/target.h"

class QComboBox;
class QSpinBox;

namespace tunebench::ui {

class TargetPicker : public QWidget {
  Q_OBJECT
 public:
  // Object names: `prefix`Gpu, `prefix`GpuCount, `prefix`Link (tests and the walkthrough find them).
  explicit TargetPicker(const QString& prefix, QWidget* parent = nullptr);

  predict::Target target() const;
  // Sets the three without changed(); an unknown GPU or link id leaves that choice as it is.
  void setTarget(const predict::Target& target);

  QComboBox* gpuCombo() const { return m_gpu; }
  QSpinBox* countBox() const { return m_count; }
  QComboBox* linkCombo() const { return m_link; }
  // Each combo box as wide as its longest name (the What-if dialog has the room; the dock, narrow,
  // keeps them short and the full name in the tooltip).
  void showFullNames();

 signals:
  void changed();

 private:
  QComboBox* m_gpu = nullptr;
  QSpinBox* m_count = nullptr;
  QComboBox* m_link = nullptr;
};

}  // namespace tunebench::ui
