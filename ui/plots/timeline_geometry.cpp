#include "ui/plots/timeline_geometry.h"

#include <algorithm>
#include <cmath>

namespace tunebench::ui {

TimelineGeometry TimelineGeometry::zoomed(double factor, double anchor_s) const {
  TimelineGeometry g = *this;
  const double span = std::max(kMinSpan_s, span_s() * factor);
  const double ratio = span_s() > 0 ? (anchor_s - t0_s) / span_s() : 0.5;
  g.t0_s = anchor_s - ratio * span;
  g.t1_s = g.t0_s + span;
  return g;
}

TimelineGeometry TimelineGeometry::panned(double dx_px) const {
  TimelineGeometry g = *this;
  const double dt = dx_px / pixelsPerSecond();
  g.t0_s -= dt;
  g.t1_s -= dt;
  return g;
}

TimelineGeometry TimelineGeometry::following(double latest_s) const {
  TimelineGeometry g = *this;
  const double span = span_s();
  g.t1_s = std::max(latest_s, span);
  g.t0_s = g.t1_s - span;
  return g;
}

TimelineGeometry TimelineGeometry::fitted(double data0_s, double data1_s) const {
  TimelineGeometry g = *this;
  const double span = std::max(kMinSpan_s, data1_s - data0_s);
  g.t0_s = data0_s - span * kMargin;
  g.t1_s = data1_s + span * kMargin;
  return g;
}

TimelineGeometry TimelineGeometry::clamped(double data0_s, double data1_s) const {
  const TimelineGeometry whole = fitted(data0_s, data1_s);
  if (span_s() >= whole.span_s()) return whole;
  TimelineGeometry g = *this;
  if (g.t0_s < whole.t0_s) {
    g.t1_s += whole.t0_s - g.t0_s;
    g.t0_s = whole.t0_s;
  } else if (g.t1_s > whole.t1_s) {
    g.t0_s -= g.t1_s - whole.t1_s;
    g.t1_s = whole.t1_s;
  }
  return g;
}

std::optional<int> TimelineRows::rowAt(double value) const {
  const double nearest = std::round(value);
  if (std::abs(value - nearest) > kBarHalfHeight) return std::nullopt;
  const int row = int(nearest);
  if (row < 0 || row >= count()) return std::nullopt;
  return row;
}

}  // namespace tunebench::ui
