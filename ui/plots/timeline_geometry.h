// The timeline's geometry: which span of time is visible and how it maps to pixels, and which
// row of the stored data holds which rank and lane (TimelineLayout maps them to rows on screen). A value type with no
// Qt widgets, so zoom, pan, "follow latest" and hit-testing are tested without a window (the hotspot idea).
#pragma once

#include <optional>

#include "core/protocol/events.h"

namespace tunebench::ui {

struct TimelineGeometry {
  double t0_s = 0.0;  // visible time range, seconds since the trial's first event
  double t1_s = 1.0;
  double left_px = 0.0;  // pixel column of t0_s
  double width_px = 1.0;

  double span_s() const { return t1_s - t0_s; }
  double pixelsPerSecond() const { return width_px / span_s(); }
  double toPixel(double t_s) const { return left_px + (t_s - t0_s) * pixelsPerSecond(); }
  double toTime(double px) const { return t0_s + (px - left_px) / pixelsPerSecond(); }

  // Zooms by `factor` (< 1 zooms in) keeping the time under `anchor_s` in place.
  // The span never drops below kMinSpan_s (a microsecond-wide view is never useful).
  TimelineGeometry zoomed(double factor, double anchor_s) const;
  // Moves the view by `dx_px` pixels (positive: the content moves right, i.e. earlier times show).
  TimelineGeometry panned(double dx_px) const;
  // Keeps the span and puts `latest_s` at the right edge (never scrolling before zero).
  TimelineGeometry following(double latest_s) const;
  // The view limited to the data [data0_s, data1_s] and a margin of kMargin of its span on each
  // side: a wider view becomes the whole data, a view beside the data is moved onto it. Without
  // this, the wheel zoomed out to -130 s .. 150 s of a 20 s run.
  TimelineGeometry clamped(double data0_s, double data1_s) const;
  // The whole data in view, with the margin ("fit to data").
  TimelineGeometry fitted(double data0_s, double data1_s) const;
  static constexpr double kMinSpan_s = 1e-5;
  static constexpr double kMargin = 0.02;
};

// Rows of the timeline, rank-major: rank 0 host, rank 0 compute, rank 0 comm, rank 1 host, ...
// Row i is centred on value i; the y axis is reversed so rank 0 is on top.
struct TimelineRows {
  static constexpr int kLanes = 3;
  int ranks = 1;

  int count() const { return ranks * kLanes; }
  static int row(int rank, protocol::Lane lane) { return rank * kLanes + int(lane); }
  static int rankOf(int row) { return row / kLanes; }
  static protocol::Lane laneOf(int row) { return protocol::Lane(row % kLanes); }
  // The row under value-axis coordinate `value`, or nullopt between bars or outside.
  std::optional<int> rowAt(double value) const;

  static constexpr double kBarHalfHeight = 0.38;
};

}  // namespace tunebench::ui
