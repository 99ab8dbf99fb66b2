#include <gtest/gtest.h>

#include "ui/plots/time_axis_ticker.h"

using tunebench::ui::format_time_label;

TEST(TimeAxisTicker, UnitFollowsTheTickStep) {
  EXPECT_EQ(format_time_label(0.25, 0.05), "250 ms");
  EXPECT_EQ(format_time_label(1.5, 0.5), "1.5 s");
  EXPECT_EQ(format_time_label(0.75, 0.25), "0.75 s");
  EXPECT_EQ(format_time_label(120, 20), "120 s");
  EXPECT_EQ(format_time_label(0.00004, 0.00001), QString::fromUtf8("40 µs"));
  EXPECT_EQ(format_time_label(0.0125, 0.0025), "12.5 ms");
}

TEST(TimeAxisTicker, NoNegativeZero) { EXPECT_EQ(format_time_label(-1e-12, 0.01), "0 ms"); }
