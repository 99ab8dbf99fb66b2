// What the screenshot programs for docs/ share (not tests): waiting until the window has loaded
// what it shows, and grabbing a window into a PNG after its plots replotted.
#pragma once

#include <QString>

class QWidget;

namespace tunebench::ui {
class MainWindow;

// Replots the window's plots (main or comparison window), grabs it into `file`; false (and a line
// on stderr) when the file cannot be written.
bool save_screenshot(QWidget& window, const QString& file);
// Waits until the window's background jobs are idle and the trial viewer has loaded.
void settle(MainWindow& window);

}  // namespace tunebench::ui
