// Exposed communication of one step's intervals: comm-lane union minus compute-lane union.
#include "core/metrics/exposed_comm.h"

#include <gtest/gtest.h>

namespace tmx = tunebench::metrics;
using tunebench::protocol::Interval;
using tunebench::protocol::Lane;
using tunebench::protocol::Phase;

TEST(ExposedComm, IsCommMinusComputeUnion) {
  // compute: [0,100) [150,200); comm: [90,160) -> exposed 100..150 = 50; [190,260) -> 200..260 = 60
  std::vector<Interval> in = {{Lane::Compute, Phase::Backward, 0, 100, "", 0, 0},
                              {Lane::Compute, Phase::Optimizer, 150, 200, "", 0, 0},
                              {Lane::Comm, Phase::AllReduce, 90, 160, "bucket 0", 1, 0},
                              {Lane::Comm, Phase::AllReduce, 190, 260, "bucket 1", 1, 0},
                              {Lane::Host, Phase::DataWait, 0, 1000, "", 0, 0}};
  EXPECT_EQ(tmx::exposed_comm_us(in), 110);
  EXPECT_EQ(tmx::comm_union_us(in), 140);
  // Overlapping comm intervals are counted once.
  in.push_back({Lane::Comm, Phase::AllReduce, 100, 140, "bucket 2", 1, 0});
  EXPECT_EQ(tmx::exposed_comm_us(in), 110);
  EXPECT_EQ(tmx::comm_union_us(in), 140);
  EXPECT_EQ(tmx::exposed_comm_us({}), 0);
}
