// LivePlot: a QCustomPlot that redraws at most kRefreshHz times a second, however many events
// arrive. Ingesting marks the plot dirty; a single-shot timer then lets the subclass update its
// ranges (beforeReplot) and replots with rpQueuedRefresh. Also restyles on palette changes (light
// and dark themes), and gives each axis as many ticks as its length holds, so labels never
// collide in a small window.
#pragma once

#include <QHash>
#include <QPair>
#include <QSize>
#include <QVector>

#include <qcustomplot.h>

class QTimer;

class QLabel;

namespace tunebench::ui {

class LivePlot : public QCustomPlot {
  Q_OBJECT
 public:
  static constexpr int kRefreshHz = 30;

  explicit LivePlot(QWidget* parent = nullptr);

  // Asks for a replot within 1/kRefreshHz s; many calls before it coalesce into one.
  void markDirty();
  // Replots now if dirty (benchmarks, screenshots and tests that grab the widget).
  void replotIfDirty();
  // A vertical axis' title, and the brief form used when the panel is too short for it
  // ("step time (ms)" / "ms"): titles of stacked panels must not run into each other.
  void setAxisTitle(QCPAxis* axis, const QString& full, const QString& brief);
  int replotCount() const { return m_replots; }

 protected:
  virtual void beforeReplot() {}
  // Axis, grid and legend colours from the palette (called at start and on palette changes).
  virtual void applyPalette();
  void styleAxisRect(QCPAxisRect* rect);
  // A hidden, word-wrapped, centred label over the plot that lets the mouse through: the note a
  // plot shows instead of what it cannot draw (the plot places and shows it).
  QLabel* addNote(const QString& objectName);
  // Row 0 of an emptied plot layout: a strip for the legend alone (fitLegendColumns), the plot's
  // axis rects in the rows below it.
  QCPLayoutGrid* addLegendRow();
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  // Tick counts, tick label visibility and axis titles from the axes' lengths in pixels (before
  // every coalesced replot, and after a layout that changed the lengths). True when it changed.
  bool fitTickCounts();
  // A legend alone in its own row (not inside an axis rect, not beside another legend) gets as many
  // columns as its widest entry fits in the plot's width, so no name is cut; true when that changed.
  bool fitLegendColumns();
  QVector<QSize> rectSizes() const;

 private:
  QTimer* m_timer;
  QHash<QCPAxis*, QPair<QString, QString>> m_titles;
  bool m_dirty = false;
  bool m_refitted = false;       // one more replot after a layout that changed the axes' fit
  QVector<QSize> m_fittedSizes;  // axis rect sizes the axes were last fitted to
  int m_replots = 0;
};

}  // namespace tunebench::ui
