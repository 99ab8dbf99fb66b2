// Interval-union arithmetic with partial, nested and touching overlaps.
#include "core/metrics/spans.h"

#include <gtest/gtest.h>

namespace ta = tunebench::metrics;

TEST(Spans, UnionMergesOverlappingAndTouchingSpans) {
  const auto u = ta::span_union({{50, 60}, {0, 10}, {5, 20}, {20, 25}, {30, 30}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].start_us, 0);
  EXPECT_EQ(u[0].end_us, 25);
  EXPECT_EQ(u[1].start_us, 50);
  EXPECT_EQ(ta::covered_us({{0, 10}, {5, 20}, {50, 60}}), 30);
}

TEST(Spans, UncoveredCountsOnlyTheExposedParts) {
  // comm [0,100) and [150,250); compute [20,40), [90,160), [200,400)
  // exposed: [0,20) [40,90) [160,200) = 20 + 50 + 40 = 110
  EXPECT_EQ(ta::uncovered_us({{0, 100}, {150, 250}}, {{20, 40}, {90, 160}, {200, 400}}), 110);
  // Fully hidden and fully exposed.
  EXPECT_EQ(ta::uncovered_us({{10, 20}}, {{0, 30}}), 0);
  EXPECT_EQ(ta::uncovered_us({{10, 20}}, {{30, 40}}), 10);
  // Overlapping comm spans are not counted twice: union [0,300) minus compute [100,150).
  EXPECT_EQ(ta::uncovered_us({{0, 200}, {100, 300}}, {{100, 150}}), 250);
}

TEST(Spans, IntersectionWalksBothLists) {
  const auto x = ta::intersect({{0, 10}, {20, 30}}, {{5, 25}});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].start_us, 5);
  EXPECT_EQ(x[0].end_us, 10);
  EXPECT_EQ(x[1].start_us, 20);
  EXPECT_EQ(x[1].end_us, 25);
}

TEST(Spans, ClipKeepsOnlyTheWindow) {
  const auto c = ta::clip({{-5, 5}, {8, 20}, {30, 40}}, {0, 10});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].start_us, 0);
  EXPECT_EQ(c[1].end_us, 10);
}
