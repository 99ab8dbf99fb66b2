#include "ui/plots/time_axis_ticker.h"

#include <cmath>

namespace tunebench::ui {

namespace {
// Decimals needed to show multiples of `step` (in the label's unit) distinctly.
int decimals_for(double step) {
  for (int d = 0; d < 6; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 6;
}
}  // namespace

QString format_time_label(double seconds, double tickStep_s) {
  if (std::abs(seconds) < tickStep_s * 1e-6) seconds = 0.0;  // no "-0 ms" from rounding
  double scale = 1.0;
  const char* unit = "s";
  if (tickStep_s < 1e-3) {
    scale = 1e6;
    unit = "µs";
  } else if (tickStep_s < 0.1) {
    scale = 1e3;
    unit = "ms";
  }
  return QStringLiteral("%1 %2").arg(seconds * scale, 0, 'f', decimals_for(tickStep_s * scale)).arg(QString::fromUtf8(unit));
}

TimeAxisTicker::TimeAxisTicker() { setTickCount(6); }

double TimeAxisTicker::getTickStep(const QCPRange& range) {
  m_lastStep = QCPAxisTicker::getTickStep(range);
  return m_lastStep;
}

QString TimeAxisTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
  return format_time_label(tick, m_lastStep);
}

}  // namespace tunebench::ui
