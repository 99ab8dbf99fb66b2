// The phase timeline: one row per rank and lane (host, compute, comm), bars coloured by phase, a
// legend of phases, step markers with step numbers on the top axis, and the interactions users of
// Nsight Systems expect:
//   wheel: zoom around the mouse; drag: pan; Ctrl+drag: zoom to the dragged span (box zoom);
//   Shift+drag: select a span (rangeSelected: its per-phase summary); Fit: the whole run;
//   a search that fades every bar but the matches and steps from one match to the next;
//   ranks hidden or their lanes collapsed into one row (TimelineLayout);
//   "follow latest", which keeps the newest steps in view while a trial runs.
// The view never leaves the data (TimelineGeometry::clamped), however far one zooms out.
#pragma once

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ui/plots/live_plot.h"
#include "ui/plots/timeline_data.h"
#include "ui/plots/timeline_layout.h"
#include "ui/plots/timeline_search.h"

namespace tunebench::ui {

class TimelinePlottable;

class TimelinePlot : public LivePlot {
  Q_OBJECT
 public:
  explicit TimelinePlot(QWidget* parent = nullptr);
  ~TimelinePlot() override;

  void addEvents(const EventBatch& batch);
  // Replaces everything with data prepared elsewhere (a stored trial, built off the GUI thread).
  void setData(TimelineData data);
  void clear();

  const TimelineData& data() const { return m_data; }
  const TimelineLayout& layout() const { return m_layout; }
  size_t barCount() const { return m_data.barCount(); }
  int lastDrawnRects() const;
  bool followLatest() const { return m_follow; }
  // The bar under a widget position and its tooltip text (empty when none).
  std::optional<TimelineHit> hitAt(const QPointF& pos) const;
  QString tooltipAt(const QPointF& pos) const;
  // Visible range and pixel mapping as a value type (for tests and keyboard zoom).
  TimelineGeometry geometry() const;
  void setGeometry(const TimelineGeometry& g);  // sets the visible time range only (clamped to the data)

  // ---- rows ----
  void setHiddenRanks(const std::set<int>& ranks);
  void setCollapsedRanks(const std::set<int>& ranks);
  std::set<int> hiddenRanks() const { return m_hidden; }
  std::set<int> collapsedRanks() const { return m_collapsed; }
  // Data rows (TimelineRows::row) of the ranks shown.
  std::vector<int> shownDataRows() const;

  // ---- selection and search ----
  std::optional<std::pair<double, double>> selectedRange() const { return m_selected; }
  void setSelectedRange(double t0_s, double t1_s);
  void clearSelectedRange();
  void setSearch(const QString& query);
  QString search() const { return m_query; }
  int matchCount() const { return int(m_found.size()); }
  int currentMatch() const { return m_current; }  // -1 before the first step
  // Moves to the next (+1) or previous (-1) match and brings it into view; false when none.
  bool stepMatch(int direction);
  const std::vector<BarRef>& matches() const { return m_found; }

  // Tick labels of the step axis (top): step numbers at step starts, thinned to fit.
  QCPAxis* stepAxis() const { return xAxis2; }

  // As high as the axes, the legend and a row a line of text high per rank shown: a window that
  // lays the plot out at this height keeps every rank's lanes and label readable.
  QSize minimumSizeHint() const override;

 public slots:
  void setFollowLatest(bool follow);
  void zoomBy(double factor);  // keyboard zoom around the centre
  void zoomToRange(double t0_s, double t1_s);
  void fitToData();

 signals:
  void followLatestChanged(bool follow);
  void rangeSelected(double t0_s, double t1_s);
  void rangeCleared();
  void searchChanged(int matches, int current);
  void layoutChanged();
  void viewChanged(double t0_s, double t1_s);
  // minimumSizeHint() changed (ranks shown, legend rows, axes): the view gives the plot its room.
  void leastHeightChanged(int px);

 protected:
  void beforeReplot() override;
  void applyPalette() override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  enum class Drag { None, Zoom, Select };
  void rebuildLayout();
  void updateRowLabels();
  void updateLegend();
  void placeLegendRow(bool shown);
  int rankRowPx() const;  // the least height a rank's row(s) get: a line of label text
  void leastHeightMayHaveChanged();
  void updateStepTicks();
  void updateMatches();
  void onRangeChanged(const QCPRange& range);
  void showSpan(QCPItemRect* item, double t0_s, double t1_s);

  TimelineData m_data;
  TimelineLayout m_layout;
  std::set<int> m_hidden, m_collapsed;
  TimelinePlottable* m_bars = nullptr;
  QCPItemRect* m_selection = nullptr;  // the selected span
  QCPItemRect* m_dragBand = nullptr;   // the span being dragged
  QCPItemRect* m_matchMark = nullptr;  // the current match
  std::optional<std::pair<double, double>> m_selected;
  QString m_query;
  std::vector<BarRef> m_found;
  std::vector<std::vector<char>> m_matchFlags;  // per data row, for the plottable
  size_t m_matchedBars = 0;                     // barCount() the matches were computed for
  int m_current = -1;
  Drag m_drag = Drag::None;
  double m_dragFrom_s = 0.0;
  std::vector<bool> m_legendPhases;  // the phases the legend lists (TimelineData::phasesSeen)
  bool m_legendOnGpu = true;
  QCPLayoutGrid* m_legendRow = nullptr;  // the legend's row under the plot, in the layout while it lists a phase
  int m_chromePx = 0;  // the plot's height outside its axis rect at the last layout
  int m_leastHeight = 0;  // minimumSizeHint().height() last announced
  int m_labelledSlots = -1;
  double m_labelledSlotPx = -1;
  bool m_follow = true;
  bool m_userZoomed = false;  // once the user zoomed, follow keeps their span
  bool m_clamping = false;
};

}  // namespace tunebench::ui
