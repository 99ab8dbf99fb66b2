// Percentiles by linear interpolation between closest ranks (numpy's default), by hand.
#include "core/metrics/percentile.h"

#include <gtest/gtest.h>

namespace tmx = tunebench::metrics;

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  // Sorted 1 2 3 4: positions 0.75, 1.5, 2.25.
  EXPECT_DOUBLE_EQ(tmx::percentile({4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(tmx::percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(tmx::percentile({4, 1, 3, 2}, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(tmx::percentile_sorted({10, 20, 30, 40, 100}, 0.5), 30);
}

TEST(Percentile, EmptyIsZeroAndQIsClamped) {
  EXPECT_EQ(tmx::percentile({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(tmx::percentile({3, 1, 2}, -1.0), 1.0);
  EXPECT_DOUBLE_EQ(tmx::percentile({3, 1, 2}, 7.0), 3.0);
}
