#include "ui/windows/plot_export.h"

#include <QFileInfo>
#include <QPainter>
#include <QSvgGenerator>

#include <qcustomplot.h>

namespace tunebench::ui {

bool save_plot(QCustomPlot* plot, const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("pdf")) return plot->savePdf(path);
  if (suffix == QLatin1String("svg")) {
    const int w = plot->width() > 0 ? plot->width() : 800;
    const int h = plot->height() > 0 ? plot->height() : 400;
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(QSize(w, h));
    svg.setViewBox(QRect(0, 0, w, h));
    svg.setTitle(plot->objectName());
    QCPPainter painter;
    if (!painter.begin(&svg)) return false;
    plot->toPainter(&painter, w, h);
    painter.end();
    return QFileInfo(path).size() > 0;
  }
  return plot->savePng(path, 0, 0, 2.0);
}

}  // namespace tunebench::ui
