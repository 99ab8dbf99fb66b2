#include "ui/models/status_colors.h"

#include <algorithm>
#include <cmath>

#include <QGuiApplication>

namespace tunebench::ui {

bool is_dark_palette(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }
bool is_dark_palette() { return is_dark_palette(QGuiApplication::palette()); }

QColor bad_color() { return is_dark_palette() ? QColor(0xff, 0x8a, 0x80) : QColor(0xc6, 0x28, 0x28); }
QColor good_color() { return is_dark_palette() ? QColor(0x81, 0xc7, 0x84) : QColor(0x2e, 0x7d, 0x32); }
QColor failed_row_background() { return is_dark_palette() ? QColor(0x5c, 0x1a, 0x1a) : QColor(0xff, 0xd6, 0xd6); }
QColor failed_row_foreground() { return is_dark_palette() ? QColor(0xff, 0xc4, 0xc4) : QColor(0x9b, 0x10, 0x10); }
QColor changed_background() { return is_dark_palette() ? QColor(0x5a, 0x46, 0x0e) : QColor(0xff, 0xe0, 0x82); }
QColor changed_foreground() { return is_dark_palette() ? QColor(0xff, 0xec, 0xb3) : QColor(0x20, 0x1a, 0x00); }
QColor note_background() { return is_dark_palette() ? QColor(0x1b, 0x2d, 0x45) : QColor(0xe8, 0xf1, 0xfb); }
QColor note_foreground() { return is_dark_palette() ? QColor(0xdc, 0xe9, 0xf8) : QColor(0x10, 0x24, 0x3e); }
QColor note_border() { return is_dark_palette() ? QColor(0x3d, 0x5a, 0x80) : QColor(0x9b, 0xbb, 0xe0); }

double contrast_ratio(const QColor& a, const QColor& b) {
  auto luminance = [](const QColor& c) {
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

}  // namespace tunebench::ui
