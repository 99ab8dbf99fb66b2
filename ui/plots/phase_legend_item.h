// A legend entry for one phase: a colour swatch and the phase name. The timeline is a single
// plottable, so its legend entries cannot be QCPPlottableLegendItems.
#pragma once

#include <qcustomplot.h>

#include "core/protocol/events.h"

namespace tunebench::ui {

class PhaseLegendItem : public QCPAbstractLegendItem {
  Q_OBJECT
 public:
  // `on_gpu`: the trial ran on GPUs; on the CPU an idle phase is named in CPU words (phase_name).
  PhaseLegendItem(QCPLegend* legend, protocol::Phase phase, bool on_gpu = true);
  protocol::Phase phase() const { return m_phase; }
  QString text() const { return m_text; }
  // Where the name is drawn: right of the swatch, the item's height.
  QRectF textRect() const;

 protected:
  void draw(QCPPainter* painter) override;
  QSize minimumOuterSizeHint() const override;

 private:
  protocol::Phase m_phase;
  QString m_text;
};

}  // namespace tunebench::ui
