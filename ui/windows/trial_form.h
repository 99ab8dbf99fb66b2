// TrialForm: the trial's knobs, built from config::knobs() and grouped as the table groups them,
// with a presets combo and the detected devices on top. The Where group shows only the fields of
// the chosen launcher (config::knob_applies). Validation runs on every edit and shows
// each problem next to its field, so a trial that would be refused is visibly wrong before Run.
//
// "Run: your own script" (docs/SCRIPTS.md) shows the script's group (the script, its arguments'
// template, the interpreter, found in the background when none is named) and, of the other
// knobs, only those a script can take (config::script_can_set); editing one of the probe's knobs
// applies it (it joins "Applied knobs").
#pragma once

#include <map>
#include <vector>

#include <QString>
#include <QWidget>

#include "core/config/trial_config.h"
#include "ui/runner/device_inventory.h"

class QComboBox;
class QGroupBox;
class QLabel;

namespace tunebench::ui {

class KnobField;

// Where the form's config came from. A config taken from a trial stored in a session file keeps
// that origin through edits (its NCCL variables still came from that file); a preset or the
// user's own config clears it. The launcher shows a preview for the first kind only.
struct ConfigOrigin {
  bool fromSession = false;
  QString source;  // recorded with the trial: "duplicate of trial 3"
};

class TrialForm : public QWidget {
  Q_OBJECT
 public:
  using Origin = ConfigOrigin;

  explicit TrialForm(QWidget* parent = nullptr);

  // The config as the form shows it; knobs whose text does not parse keep their default and are
  // reported by problems().
  config::TrialConfig config() const;
  void setConfig(const config::TrialConfig& config, const Origin& origin = {});
  bool applyPreset(const QString& name);
  // The model fields from a Hugging Face config.json (core/config/hf_config.h): the matching model
  // preset or 'custom' with its dimensions. Returns false, changing nothing, when the file is no
  // usable model config; `report` gets the problems, or the fields the model cannot express.
  bool loadHfConfig(const QString& path, QString* report = nullptr);
  const Origin& origin() const { return m_origin; }
  // The preset the form started from ("" when none) and whether fields were edited since.
  QString presetName() const { return m_presetName; }
  bool isEditedFromPreset() const;

  // Parse problems, config::validate() and the device limits, in knobs() order.
  std::vector<config::Problem> problems() const;
  // The problems of the configuration itself (parse and config::validate), whatever this machine
  // has: what the Prediction dock, which predicts for other GPUs too, refuses; `parsed` gets it.
  std::vector<config::Problem> configProblems(config::TrialConfig* parsed = nullptr) const;
  // Shows problems() next to the fields; returns how many there are.
  int validateAndShow();
  // Scrolls the form's scroll area (when it has one) to the first field validateAndShow() marked,
  // or to the summary when the problems are not a shown field's, and focuses it.
  void revealFirstProblem();

  void setDevices(const DeviceInventory& devices);
  const DeviceInventory& devices() const { return m_devices; }
  KnobField* field(const QString& key) const;
  // Whether the field's row is shown: the Where group hides what the chosen launcher does not use.
  bool isFieldShown(const QString& key) const;
  QComboBox* presetCombo() const { return m_presets; }
  // The benchmark or the user's own script (what "Run" says at the top).
  bool isScriptMode() const;
  void setScriptMode(bool script);
  // What the interpreter search found for a script ("/usr/bin/python3: torch 1.13.1"), or why not.
  QString pythonFound() const;

 signals:
  void changed();

 private:
  void onEdited(KnobField* field);
  void chooseHfConfig();
  void chooseScript();
  void findPython();
  void updateDependentFields();
  void updatePresetBox();

  std::map<std::string, KnobField*> m_fields;
  QComboBox* m_presets = nullptr;
  QComboBox* m_program = nullptr;  // the benchmark, or your own script
  QLabel* m_pythonFound = nullptr;
  QString m_lastScript;            // kept while the benchmark is chosen
  std::map<std::string, QGroupBox*> m_groups;
  QLabel* m_devicesLabel = nullptr;
  QLabel* m_summary = nullptr;
  DeviceInventory m_devices;
  Origin m_origin;
  QString m_presetName;
  bool m_applying = false;
};

}  // namespace tunebench::ui
