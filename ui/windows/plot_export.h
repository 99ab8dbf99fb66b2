// Saving a plot to a file, the format chosen by the suffix: .png (2x scale), .pdf (vector, through
// QCustomPlot), .svg (vector, QSvgGenerator). QCustomPlot has no SVG writer of its own.
#pragma once

#include <QString>

class QCustomPlot;

namespace tunebench::ui {

bool save_plot(QCustomPlot* plot, const QString& path);

}  // namespace tunebench::ui
