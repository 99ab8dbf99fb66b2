// Draws TimelineData as bars, one row per rank and lane, coloured by phase.
//
// Only the visible part of each row is walked, and bars narrower than a pixel that would land on
// an already painted pixel are skipped, so a zoomed-out 8-rank x 2000-step run costs about one
// rectangle per pixel column per row, not one per interval.
#pragma once

#include <qcustomplot.h>

namespace tunebench::ui {

class TimelineData;

class TimelinePlottable : public QCPAbstractPlottable {
  Q_OBJECT
 public:
  TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineData* data);

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
  const TimelineData* m_data;
  int m_lastDrawn = 0;
};

}  // namespace tunebench::ui
