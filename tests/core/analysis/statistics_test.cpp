// Quartiles by linear interpolation (numpy's default), checked against hand computations.
#include "core/analysis/statistics.h"

#include <gtest/gtest.h>

namespace ta = tunebench::analysis;

TEST(Statistics, QuartilesInterpolateBetweenClosestRanks) {
  // Sorted 1 2 3 4: positions 0.75, 1.5, 2.25.
  const auto s = ta::spread_of({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.p25, 1.75);
  EXPECT_DOUBLE_EQ(s.p75, 3.25);
  EXPECT_DOUBLE_EQ(s.iqr(), 1.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
}

TEST(Statistics, OddCountMedianIsTheMiddleSample) {
  const auto s = ta::spread_of({10, 30, 20, 100, 40});
  EXPECT_DOUBLE_EQ(s.median, 30);
  EXPECT_DOUBLE_EQ(s.p25, 20);
  EXPECT_DOUBLE_EQ(s.p75, 40);
  EXPECT_DOUBLE_EQ(s.mean, 40);
}

TEST(Statistics, EmptyHasNoData) {
  const auto s = ta::spread_of({});
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.median, 0);
}

TEST(Statistics, PoolingConcatenatesRepeatsInsteadOfAveragingMedians) {
  // Medians 2 and 11 would average to 6.5; the pooled population {1,2,3,10,11,12} has median 6.5
  // too, but its quartiles show the two clusters.
  const auto s = ta::pooled_spread({{1, 2, 3}, {10, 11, 12}});
  EXPECT_EQ(s.n, 6);
  EXPECT_DOUBLE_EQ(s.median, 6.5);
  EXPECT_DOUBLE_EQ(s.p25, 2.25);
  EXPECT_DOUBLE_EQ(s.p75, 10.75);
  const auto unequal = ta::pooled_spread({{1}, {10, 11, 12, 13}});
  EXPECT_DOUBLE_EQ(unequal.median, 11);  // not (1 + 11.5) / 2
}
