// Interval arithmetic: nested recompute carved out of backward, host-clock intervals — with
// hand-computed answers (exposed communication and bus bandwidth: tests/core/metrics).
#include <gtest/gtest.h>

#include "core/engine/timing/timeline.h"

namespace te = tunebench::engine;
using tunebench::protocol::Interval;
using tunebench::protocol::Lane;
using tunebench::protocol::Phase;

TEST(Timeline, RecomputeIsCarvedOutOfBackward) {
  std::vector<Interval> in = {{Lane::Compute, Phase::Backward, 100, 200, "", 0, 0},
                              {Lane::Compute, Phase::Recompute, 120, 130, "block 1", 0, 0},
                              {Lane::Compute, Phase::Recompute, 150, 170, "block 0", 0, 0},
                              {Lane::Host, Phase::DataWait, 0, 10, "", 0, 0}};
  auto out = te::carve_nested(in);
  int64_t backward = 0, recompute = 0;
  for (const auto& i : out) {
    if (i.phase == Phase::Backward) backward += i.duration_us();
    if (i.phase == Phase::Recompute) recompute += i.duration_us();
  }
  EXPECT_EQ(backward, 70);  // 20 + 20 + 30
  EXPECT_EQ(recompute, 30);
  EXPECT_EQ(out.size(), 6u);  // 3 backward pieces, 2 recomputes, 1 host
}

TEST(Timeline, HostClockIntervalsAndDisabledTimeline) {
  te::Timeline t(false, true);
  const int h = t.begin(Phase::Forward);
  t.end(h);
  t.add_host(Phase::DataWait, 5, 9);
  const int open = t.begin(Phase::Backward);  // never closed: dropped
  (void)open;
  const auto out = t.collect(tunebench::protocol::now_us());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].phase, Phase::DataWait);
  EXPECT_EQ(out[1].lane, Lane::Compute);
  EXPECT_GE(out[1].end_us, out[1].start_us);

  te::Timeline off(false, false);
  off.end(off.begin(Phase::Forward));
  off.add_host(Phase::DataWait, 1, 2);
  EXPECT_TRUE(off.collect(0).empty());
}
