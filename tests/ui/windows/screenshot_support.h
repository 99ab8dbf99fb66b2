// What the screenshot programs for docs/ share (not tests): waiting until the window has loaded
// what it shows, and grabbing a window into a PNG after its plots replotted.
#pragma once

#include <QSize>
#include <QString>

#include "ui/windows/main_window.h"

class QWidget;

namespace tunebench::ui {

// Replots the window's plots (main or comparison window), grabs it into `file`; false (and a line
// on stderr) when the file cannot be written.
bool save_screenshot(QWidget& window, const QString& file);
// Waits until the window's background jobs are idle and the trial viewer has loaded.
void settle(MainWindow& window);
// The start of every screenshot program: test-mode paths, at least `min_args` arguments (else the
// usage line and false), the theme named by argv[2].
bool start_screenshots(int argc, char** argv, int min_args, const char* usage);
// A window that reads no settings and detects no devices (a 2-core CPU machine), shown at 1600x1000
// or the size given.
MainWindow::Options screenshot_window_options();
void show_for_screenshots(MainWindow& window, QSize size = QSize(1600, 1000));
// "1280x760" -> that size; anything else -> `fallback`.
QSize parse_screenshot_size(const char* text, QSize fallback);

}  // namespace tunebench::ui
