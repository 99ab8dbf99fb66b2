#include "ui/windows/plot_export.h"

#include <QDir>
#include <QFileInfo>
#include <QPainter>
#include <QSvgGenerator>

#include <qcustomplot.h>

#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/windows/live_view.h"

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

QStringList save_live_plots(LiveView* view, const QString& path) {
  const QFileInfo info(path);
  const QString base = info.dir().filePath(info.completeBaseName());
  const QString ext = info.suffix().toLower();
  const QString suffix =
      ext == QLatin1String("pdf") || ext == QLatin1String("svg") ? QLatin1Char('.') + ext : QStringLiteral(".png");
  view->replotNow();
  QStringList written;
  const std::pair<QCustomPlot*, QString> plots[] = {{view->timeline(), base + suffix},
                                                    {view->stepTime(), base + QStringLiteral("-steps") + suffix},
                                                    {view->telemetry(), base + QStringLiteral("-telemetry") + suffix}};
  for (const auto& [plot, file] : plots)
    if (save_plot(plot, file)) written << file;
  return written;
}

}  // namespace tunebench::ui
