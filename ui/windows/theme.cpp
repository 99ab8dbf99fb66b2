#include "ui/windows/theme.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

#include "ui/models/status_colors.h"

namespace tunebench::ui {

namespace {
struct SystemTheme {
  bool remembered = false;
  QPalette palette;
  QString style;
  Theme current = Theme::System;
};

SystemTheme& state() {
  static SystemTheme s;
  return s;
}

QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), dim(0x8a, 0x8a, 0x8a);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, dim);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3b));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4b));
  p.setColor(QPalette::Midlight, QColor(0x3a, 0x3c, 0x40));
  p.setColor(QPalette::Mid, QColor(0x25, 0x26, 0x29));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
  p.setColor(QPalette::Highlight, QColor(0x3d, 0x7a, 0xc7));
  p.setColor(QPalette::HighlightedText, Qt::white);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, dim);
  return p;
}

bool desktop_prefers_dark() {
  // Qt 6.4 has no QStyleHints::colorScheme(); GTK's own switch is the one variable desktops set.
  return qEnvironmentVariable("GTK_THEME").endsWith(QStringLiteral(":dark"), Qt::CaseInsensitive);
}
}  // namespace

void remember_system_theme() {
  SystemTheme& s = state();
  if (s.remembered) return;
  s.remembered = true;
  s.palette = QApplication::palette();
  s.style = QApplication::style() ? QApplication::style()->name() : QString();
}

void apply_theme(Theme theme) {
  remember_system_theme();
  SystemTheme& s = state();
  s.current = theme;
  if (theme == Theme::System && !(desktop_prefers_dark() && !is_dark_palette(s.palette))) {
    if (!s.style.isEmpty() && QApplication::style()->name() != s.style) QApplication::setStyle(s.style);
    // A palette with no role set is no override: the application takes the platform theme's
    // palette again and follows it when the desktop switches (a copy of s.palette would pin it).
    QApplication::setPalette(QPalette());
    return;
  }
  const bool dark = theme == Theme::Dark || theme == Theme::System;  // System here: the desktop asked for dark
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QApplication::setPalette(dark ? dark_palette() : QApplication::style()->standardPalette());
}

Theme current_theme() { return state().current; }

Theme theme_from_string(const QString& text) {
  if (text.compare(QStringLiteral("light"), Qt::CaseInsensitive) == 0) return Theme::Light;
  if (text.compare(QStringLiteral("dark"), Qt::CaseInsensitive) == 0) return Theme::Dark;
  return Theme::System;
}

QString theme_to_string(Theme theme) {
  switch (theme) {
    case Theme::Light:
      return QStringLiteral("light");
    case Theme::Dark:
      return QStringLiteral("dark");
    case Theme::System:
      break;
  }
  return QStringLiteral("system");
}

QList<QAction*> theme_actions(QObject* parent) {
  auto* group = new QActionGroup(parent);
  group->setExclusive(true);
  QList<QAction*> out;
  const std::pair<Theme, const char*> entries[] = {
      {Theme::System, "Follow the &desktop"}, {Theme::Light, "&Light"}, {Theme::Dark, "D&ark"}};
  for (const auto& [theme, text] : entries) {
    auto* a = new QAction(QString::fromUtf8(text), group);
    a->setObjectName(QStringLiteral("actionTheme") + (theme == Theme::System  ? QStringLiteral("System")
                                                      : theme == Theme::Light ? QStringLiteral("Light")
                                                                              : QStringLiteral("Dark")));
    a->setCheckable(true);
    a->setChecked(current_theme() == theme);
    QObject::connect(a, &QAction::triggered, a, [theme] { apply_theme(theme); });
    out << a;
  }
  return out;
}

QColor error_color() { return bad_color(); }

}  // namespace tunebench::ui
