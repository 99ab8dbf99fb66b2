// A legend entry for one phase: a colour swatch and the phase name. The timeline is a single
// plottable, so its legend entries cannot be QCPPlottableLegendItems.
#pragma once

#include <qcustomplot.h>

#include "core/protocol/events.h"

namespace tunebench::ui {

class PhaseLegendItem : public QCPAbstractLegendItem {
  Q_OBJECT
 public:
  PhaseLegendItem(QCPLegend* legend, protocol::Phase phase);
  protocol::Phase phase() const { return m_phase; }
  // Where the name is drawn: right of the swatch, the item's height.
  QRectF textRect() const;

 protected:
  void draw(QCPPainter* painter) override;
  QSize minimumOuterSizeHint() const override;

 private:
  protocol::Phase m_phase;
};

}  // namespace tunebench::ui
