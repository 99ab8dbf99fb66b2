// Interval arithmetic: nested recompute carved out of backward, exposed communication, bus
// bandwidth — all with hand-computed answers.
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

TEST(Timeline, ExposedCommunicationIsCommMinusComputeUnion) {
  // compute: [0,100) [150,200); comm: [90,160) -> exposed 100..150 = 50; [190,260) -> 200..260 = 60
  std::vector<Interval> in = {{Lane::Compute, Phase::Backward, 0, 100, "", 0, 0},
                              {Lane::Compute, Phase::Optimizer, 150, 200, "", 0, 0},
                              {Lane::Comm, Phase::AllReduce, 90, 160, "bucket 0", 1, 0},
                              {Lane::Comm, Phase::AllReduce, 190, 260, "bucket 1", 1, 0},
                              {Lane::Host, Phase::DataWait, 0, 1000, "", 0, 0}};
  EXPECT_EQ(te::exposed_comm_us(in), 110);
  // overlapping comm intervals are counted once
  in.push_back({Lane::Comm, Phase::AllReduce, 100, 140, "bucket 2", 1, 0});
  EXPECT_EQ(te::exposed_comm_us(in), 110);
  EXPECT_EQ(te::exposed_comm_us({}), 0);
}

TEST(Timeline, BusBandwidthFollowsNcclTests) {
  // 1 GB all-reduce in 10 ms on 2 ranks: algbw 100 GB/s, busbw = 100 * 2(n-1)/n = 100
  EXPECT_NEAR(te::bus_bandwidth_gbps(Phase::AllReduce, 1000000000, 10000, 2), 100.0, 1e-9);
  // on 8 ranks the factor is 2*7/8
  EXPECT_NEAR(te::bus_bandwidth_gbps(Phase::AllReduce, 1000000000, 10000, 8), 175.0, 1e-9);
  EXPECT_NEAR(te::bus_bandwidth_gbps(Phase::AllGather, 1000000000, 10000, 2), 50.0, 1e-9);
  EXPECT_EQ(te::bus_bandwidth_gbps(Phase::AllReduce, 100, 0, 2), 0.0);
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
