// KnownSettingsDialog: a trial's settings, read-only, with "Edit known settings" for imported
// torch.profiler traces.
//
// Every knob of config::knobs() is listed with its value, or "unknown" where the trial's config
// does not hold it (config/known_settings.h): a trace shows the world size and the strategy, not
// the micro-batch. For an imported trial the user may fill in what they know; the dialog only
// collects the changes ("key=value" texts and keys to forget) and shows problems it is given:
// validating and storing is the caller's (SessionController::editKnownSettings), so a bad value
// keeps the dialog open with the reason. A native trial's settings are what it ran: read-only.
#pragma once

#include <map>
#include <string>

#include <QDialog>
#include <QStringList>

#include <nlohmann/json.hpp>

class QLabel;
class QLineEdit;
class QPushButton;
class QDialogButtonBox;

namespace tunebench::ui {

class KnownSettingsDialog : public QDialog {
  Q_OBJECT
 public:
  KnownSettingsDialog(const QString& trialName, const nlohmann::json& config, bool editable, QWidget* parent = nullptr);

  bool isEditing() const { return m_editing; }
  void setEditing(bool editing);
  // The field of a knob (tests type into it).
  QLineEdit* field(const QString& key) const;
  QPushButton* editButton() const { return m_edit; }
  // What the user changed: "key=value" for new or changed values, keys whose text was cleared.
  QStringList changedSettings() const;
  QStringList clearedKeys() const;
  void showProblems(const QString& text);

 signals:
  // Save was pressed with changes; the caller stores them and accept()s, or showProblems().
  void saveRequested();

 private:
  std::map<std::string, QLineEdit*> m_fields;
  std::map<std::string, QString> m_original;  // known values as shown; absent = unknown
  QPushButton* m_edit = nullptr;
  QDialogButtonBox* m_buttons = nullptr;
  QLabel* m_problems = nullptr;
  bool m_editing = false;
};

}  // namespace tunebench::ui
