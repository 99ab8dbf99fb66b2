// paint_bar_row (ui/plots/bar_pixels.h), the rule the timeline and its overview paint by.
#include "ui/plots/bar_pixels.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tunebench::ui;
using tunebench::protocol::Phase;

// At a known scale: 10 pixels a second.
TEST(BarPixels, ANarrowColumnTakesThePhaseCoveringMostOfItAndAMatchWins) {
  auto bar = [](double a, double b, Phase p) {
    TimelineBar t;
    t.start_s = a;
    t.end_s = b;
    t.phase = p;
    return t;
  };
  const std::vector<TimelineBar> bars = {
      bar(0.00, 0.02, Phase::LaunchGap), bar(0.02, 0.08, Phase::Forward), bar(0.08, 0.10, Phase::LaunchGap),  // column 0
      bar(0.10, 0.13, Phase::Forward), bar(0.13, 0.20, Phase::SyncWait),                                      // column 1
      bar(0.20, 0.55, Phase::Backward),                                                                     // 3.5 px
      bar(0.60, 0.61, Phase::Optimizer), bar(0.61, 0.69, Phase::HostWait)};                                  // column 6
  auto run = [&](std::vector<size_t> matches) {
    std::vector<BarRect> out;
    paint_bar_row(
        bars, 0, bars.size(), [](double t) { return t * 10.0; },
        [&](size_t i) { return std::find(matches.begin(), matches.end(), i) != matches.end(); },
        [&](const BarRect& r) { out.push_back(r); });
    return out;
  };
  const auto plain = run({});
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_EQ(plain[0].phase, Phase::Forward);   // 0.6 px of forward against 0.4 of gaps
  EXPECT_EQ(plain[1].phase, Phase::SyncWait);  // 0.7 px of sync against 0.3 of forward
  EXPECT_EQ(plain[2].phase, Phase::Backward);
  EXPECT_DOUBLE_EQ(plain[2].x1 - plain[2].x0, 3.5);
  EXPECT_EQ(plain[3].phase, Phase::HostWait);
  for (const auto& r : plain) EXPECT_GE(r.x1 - r.x0, 1.0);
  const auto searched = run({6});  // the optimizer's 0.1 px is a search match
  ASSERT_EQ(searched.size(), 4u);
  EXPECT_EQ(searched[3].phase, Phase::Optimizer);
  EXPECT_TRUE(searched[3].wins);
  EXPECT_FALSE(searched[0].wins);
}
