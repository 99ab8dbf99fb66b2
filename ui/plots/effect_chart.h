// EffectChart: an investigation's ranked factors as horizontal bars of their effect on tokens/s
// (percent against the repeated baseline), best at the top, with the 95 % interval as error bars
// and the run-to-run noise floor as a shaded band around zero. Bars beyond the noise are coloured;
// slower beyond it red; bars within it are grey: the chart never shows a winner the attribution did not declare.
#pragma once

#include "core/investigate/attribution.h"
#include "ui/plots/live_plot.h"

namespace tunebench::ui {

class EffectChart : public LivePlot {
  Q_OBJECT
 public:
  explicit EffectChart(QWidget* parent = nullptr);

  void setAttribution(const investigate::Attribution& attribution);
  // The x axis's unit ("tokens", "samples"); setAttribution sets it from a measured baseline.
  void setRateUnit(const QString& unit);
  int barCount() const;          // factors drawn (failed ones are not)
  int beyondNoiseCount() const;  // of which beyond the noise (faster or slower)

 protected:
  void applyPalette() override;

 private:
  QCPBars* m_beyond;
  QCPBars* m_slower;
  QCPBars* m_within;
  QCPErrorBars* m_errors;
  QCPItemRect* m_noise;
};

}  // namespace tunebench::ui
