// A time axis that labels ticks in the unit a person reads at that zoom: "250 ms", "1.5 s",
// "40 µs", instead of QCustomPlot's bare numbers of seconds.
#pragma once

#include <qcustomplot.h>

namespace tunebench::ui {

// Label for a tick at `seconds` when ticks are `tickStep_s` apart. The unit follows the step, so
// neighbouring labels share a unit; precision is just enough to tell neighbours apart.
QString format_time_label(double seconds, double tickStep_s);

class TimeAxisTicker : public QCPAxisTicker {
 public:
  TimeAxisTicker();

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;
  double getTickStep(const QCPRange& range) override;

 private:
  double m_lastStep = 1.0;
};

}  // namespace tunebench::ui
