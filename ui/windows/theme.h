// Light and dark themes. "System" (the default) follows the desktop: the palette the platform
// theme gives Qt (GNOME/GTK, KDE), a desktop asking for dark through GTK_THEME=…:dark, and every
// palette change the desktop sends while the window is open (the plots restyle themselves on
// QEvent::PaletteChange). "Light" and "Dark" force Qt's Fusion style with a light or dark palette.
// The few meaningful colours of tables and labels come from status_colors.h, readable on both.
#pragma once

#include <QColor>
#include <QList>
#include <QString>

class QAction;
class QObject;

namespace tunebench::ui {

enum class Theme { System, Light, Dark };

// Remembers the platform's palette and style; call once, before any theme is applied.
void remember_system_theme();
void apply_theme(Theme theme);
Theme current_theme();
Theme theme_from_string(const QString& text);  // "light", "dark", else System
QString theme_to_string(Theme theme);
// Three exclusive, checkable actions (actionThemeSystem / Light / Dark) that apply a theme.
QList<QAction*> theme_actions(QObject* parent);
// Red for error text on the current palette.
QColor error_color();

}  // namespace tunebench::ui
