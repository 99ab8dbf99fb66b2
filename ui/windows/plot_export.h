// Saving a plot to a file, the format chosen by the suffix: .png (2x scale), .pdf (vector, through
// QCustomPlot), .svg (vector, QSvgGenerator). QCustomPlot has no SVG writer of its own.
#pragma once

#include <QString>
#include <QStringList>

class QCustomPlot;

namespace tunebench::ui {

class LiveView;

bool save_plot(QCustomPlot* plot, const QString& path);
// The view's three plots, one file each: PATH for the timeline, PATH-steps and PATH-telemetry
// beside it (PNG unless PATH ends in .pdf or .svg). Returns the files written.
QStringList save_live_plots(LiveView* view, const QString& path);

}  // namespace tunebench::ui
