// The few colours that carry meaning outside the plots (failed, better/worse, changed, a note),
// chosen for the application's current palette: readable (contrast of 4.5:1 or more against the
// base colour) in light and in dark themes. Plots take phase colours from phase_style.h, which
// read on both.
#pragma once

#include <QColor>
#include <QPalette>

namespace tunebench::ui {

bool is_dark_palette(const QPalette& palette);
bool is_dark_palette();  // the application's

QColor bad_color();   // text: failed, worse, a problem
QColor good_color();  // text: better
QColor failed_row_background();
QColor failed_row_foreground();
QColor changed_background();  // a cell that differs from the baseline
QColor changed_foreground();
QColor note_background();  // a highlighted sentence (the comparison's throughput statement)
QColor note_foreground();
QColor note_border();

// WCAG contrast ratio of two colours (1 .. 21), for tests and checks.
double contrast_ratio(const QColor& a, const QColor& b);

}  // namespace tunebench::ui
