// What the window remembers between runs (QSettings): its geometry and dock layout, the theme,
// and the trial last in the form.
#pragma once

class QMainWindow;

namespace tunebench::ui {

class TrialForm;

void restore_window_settings(QMainWindow& window, TrialForm& form);
void save_window_settings(const QMainWindow& window, const TrialForm& form);

}  // namespace tunebench::ui
