// Bus bandwidth and the communication floor in the nccl-tests conventions, by hand.
#include "core/metrics/bus_bandwidth.h"

#include <gtest/gtest.h>

namespace tmx = tunebench::metrics;
using tunebench::protocol::Phase;

TEST(BusBandwidth, FollowsNcclTests) {
  // 1 GB all-reduce in 10 ms on 2 ranks: algbw 100 GB/s, busbw = 100 * 2(n-1)/n = 100.
  EXPECT_NEAR(tmx::bus_bandwidth_gbps(Phase::AllReduce, 1'000'000'000, 10'000, 2), 100.0, 1e-9);
  EXPECT_NEAR(tmx::bus_bandwidth_gbps(Phase::AllReduce, 1'000'000'000, 10'000, 8), 175.0, 1e-9);
  EXPECT_NEAR(tmx::bus_bandwidth_gbps(Phase::AllReduce, 1'000'000'000, 10'000, 4), 150.0, 1e-9);
  EXPECT_NEAR(tmx::bus_bandwidth_gbps(Phase::AllGather, 1'000'000'000, 10'000, 4), 75.0, 1e-9);
  EXPECT_NEAR(tmx::bus_bandwidth_gbps(Phase::Broadcast, 1'000'000'000, 10'000, 4), 100.0, 1e-9);
}

TEST(BusBandwidth, NothingMovesWithoutTimeBytesOrPeers) {
  EXPECT_EQ(tmx::bus_bandwidth_gbps(Phase::AllReduce, 100, 0, 2), 0.0);
  EXPECT_EQ(tmx::bus_bandwidth_gbps(Phase::AllReduce, 0, 10, 2), 0.0);
  EXPECT_EQ(tmx::bus_factor(Phase::AllReduce, 1), 0.0);
  EXPECT_EQ(tmx::bus_factor(Phase::Forward, 8), 0.0);
}

TEST(BusBandwidth, FloorIsBusBytesOverBusbw) {
  EXPECT_NEAR(tmx::comm_floor_ms(6e9, 250.0), 24.0, 1e-9);
  EXPECT_EQ(tmx::comm_floor_ms(6e9, 0.0), 0.0);
}

TEST(ProbeSizes, DoubleFromTheSmallestToTheLargestInWholeElements) {
  const int64_t mib = int64_t{1} << 20;
  EXPECT_EQ(tmx::probe_sizes(mib, 4 * mib, 4), (std::vector<int64_t>{mib, 2 * mib, 4 * mib}));
  // 0.25 MiB to 1 MiB (the CLI test's range): 3 sizes; a maximum between doublings is not reached.
  EXPECT_EQ(tmx::probe_sizes(mib / 4, mib, 4).size(), 3u);
  EXPECT_EQ(tmx::probe_sizes(mib, 3 * mib, 4).size(), 2u);
  // At least one element, rounded down to whole elements; nothing when max < min.
  EXPECT_EQ(tmx::probe_sizes(1, 10, 4), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(tmx::probe_sizes(6, 6, 4), (std::vector<int64_t>{4}));
  EXPECT_TRUE(tmx::probe_sizes(4 * mib, mib, 4).empty());
}
