// Draws TimelineData as bars in the rows of a TimelineLayout, coloured by phase; while a search is
// active, bars that do not match are faded so the matches stand out.
//
// Only the visible part of each row is walked, and bars narrower than a pixel that would land on
// an already painted pixel are skipped, so a zoomed-out 8-rank x 2000-step run costs about one
// rectangle per pixel column per row, not one per interval.
#pragma once

#include <vector>

#include <qcustomplot.h>

namespace tunebench::ui {

class TimelineData;
class TimelineLayout;

class TimelinePlottable : public QCPAbstractPlottable {
  Q_OBJECT
 public:
  // `matches`: per data row, 1 for a bar that matches the search; empty when no search runs.
  TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineData* data, const TimelineLayout* layout,
                    const std::vector<std::vector<char>>* matches);

  double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
  QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
  QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                         const QCPRange& inKeyRange = QCPRange()) const override;
  // Rectangles painted by the last draw (the benchmark reports it).
  int lastDrawnRects() const { return m_lastDrawn; }

 protected:
  void draw(QCPPainter* painter) override;
  void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

 private:
  void drawRow(QCPPainter* painter, int dataRow, double top, double height, const QCPRange& range);

  const TimelineData* m_data;
  const TimelineLayout* m_layout;
  const std::vector<std::vector<char>>* m_matches;
  int m_lastDrawn = 0;
};

}  // namespace tunebench::ui
