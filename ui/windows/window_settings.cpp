#include "ui/windows/window_settings.h"

#include <QMainWindow>
#include <QSettings>

#include <nlohmann/json.hpp>

#include "ui/windows/theme.h"
#include "ui/windows/trial_form.h"

namespace tunebench::ui {

void restore_window_settings(QMainWindow& window, TrialForm& form) {
  QSettings settings;
  window.restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  window.restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  apply_theme(theme_from_string(settings.value(QStringLiteral("view/theme")).toString()));
  const QByteArray last = settings.value(QStringLiteral("trial/lastConfig")).toByteArray();
  if (last.isEmpty()) return;
  const auto json = nlohmann::json::parse(last.toStdString(), nullptr, false);
  if (json.is_discarded()) return;
  const auto parsed = config::from_json(json);
  if (parsed.ok()) form.setConfig(parsed.config);
}

void save_window_settings(const QMainWindow& window, const TrialForm& form) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), window.saveGeometry());
  settings.setValue(QStringLiteral("window/state"), window.saveState());
  settings.setValue(QStringLiteral("view/theme"), theme_to_string(current_theme()));
  settings.setValue(QStringLiteral("trial/lastConfig"),
                    QByteArray::fromStdString(config::to_json(form.config()).dump()));
}

}  // namespace tunebench::ui
