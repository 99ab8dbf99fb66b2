// The overlap model with hand-computed answers: what stays exposed, the two speedup bounds, and the
// grad_accum factor that keeps 90 % per GPU.
#include "core/metrics/data_parallel_bounds.h"

#include <gtest/gtest.h>

namespace tmx = tunebench::metrics;

TEST(DataParallelBounds, ExposedIsTheFloorLessWhatCanHide) {
  EXPECT_DOUBLE_EQ(tmx::exposed_comm_lower_bound_ms(50.0, 30.0), 20.0);
  EXPECT_DOUBLE_EQ(tmx::exposed_comm_lower_bound_ms(50.0, 80.0), 0.0);
  EXPECT_DOUBLE_EQ(tmx::exposed_comm_lower_bound_ms(50.0, -10.0), 50.0);  // negative compute hides nothing
}

TEST(DataParallelBounds, TwoGpusWithAFloorLargerThanBackward) {
  // C = 100 ms of compute per rank's share, F = 400 ms floor, 60 ms of backward to hide behind.
  const auto b = tmx::data_parallel_bounds(2, 100.0, 400.0, 60.0);
  EXPECT_DOUBLE_EQ(b.exposed_min_ms, 340.0);
  EXPECT_DOUBLE_EQ(b.speedup_no_overlap, 2 * 100.0 / 500.0);    // 0.4
  EXPECT_DOUBLE_EQ(b.speedup_full_overlap, 2 * 100.0 / 440.0);  // 0.4545...
  EXPECT_EQ(b.accum_for_90pct, 36);                            // 9 * 400 / 100
}

TEST(DataParallelBounds, NoComputeGivesNoSpeedupAndOneMicroStep) {
  const auto b = tmx::data_parallel_bounds(4, 0.0, 10.0, 0.0);
  EXPECT_DOUBLE_EQ(b.speedup_full_overlap, 0.0);
  EXPECT_EQ(b.accum_for_90pct, 1);
  EXPECT_EQ(tmx::data_parallel_bounds(2, 100.0, 1.0, 0.0).accum_for_90pct, 1);  // 0.09 -> at least 1
}
