#include <gtest/gtest.h>

#include "ui/plots/timeline_geometry.h"

using namespace tunebench::ui;
using tunebench::protocol::Lane;

TEST(TimelineGeometry, MapsTimeToPixelsAndBack) {
  TimelineGeometry g{2.0, 4.0, 100.0, 800.0};
  EXPECT_DOUBLE_EQ(g.pixelsPerSecond(), 400.0);
  EXPECT_DOUBLE_EQ(g.toPixel(2.0), 100.0);
  EXPECT_DOUBLE_EQ(g.toPixel(4.0), 900.0);
  EXPECT_DOUBLE_EQ(g.toTime(g.toPixel(3.3)), 3.3);
}

TEST(TimelineGeometry, ZoomKeepsTheAnchorInPlace) {
  const TimelineGeometry g{0.0, 10.0, 0.0, 1000.0};
  const TimelineGeometry in = g.zoomed(0.5, 8.0);
  EXPECT_DOUBLE_EQ(in.span_s(), 5.0);
  EXPECT_DOUBLE_EQ(in.toPixel(8.0), g.toPixel(8.0));
  const TimelineGeometry tiny = g.zoomed(1e-12, 1.0);
  EXPECT_GE(tiny.span_s(), TimelineGeometry::kMinSpan_s * 0.999);
}

TEST(TimelineGeometry, PanMovesByPixels) {
  const TimelineGeometry g{0.0, 10.0, 0.0, 1000.0};
  const TimelineGeometry p = g.panned(100.0);  // drag right by 100 px = 1 s earlier
  EXPECT_DOUBLE_EQ(p.t0_s, -1.0);
  EXPECT_DOUBLE_EQ(p.span_s(), 10.0);
}

TEST(TimelineGeometry, FollowKeepsSpanAndLatestAtTheRightEdge) {
  const TimelineGeometry g{0.0, 2.0, 0.0, 500.0};
  const TimelineGeometry f = g.following(7.5);
  EXPECT_DOUBLE_EQ(f.t1_s, 7.5);
  EXPECT_DOUBLE_EQ(f.span_s(), 2.0);
  EXPECT_DOUBLE_EQ(g.following(0.5).t0_s, 0.0);  // never scrolls before the start
}

TEST(TimelineRows, RankMajorRowsAndHitTesting) {
  TimelineRows rows{2};
  EXPECT_EQ(rows.count(), 6);
  EXPECT_EQ(TimelineRows::row(1, Lane::Comm), 5);
  EXPECT_EQ(TimelineRows::rankOf(4), 1);
  EXPECT_EQ(TimelineRows::laneOf(4), Lane::Compute);
  EXPECT_EQ(rows.rowAt(3.2), 3);
  EXPECT_FALSE(rows.rowAt(3.5).has_value());  // between bars
  EXPECT_FALSE(rows.rowAt(6.0).has_value());
  EXPECT_FALSE(rows.rowAt(-1.0).has_value());
}
