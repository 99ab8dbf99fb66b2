// Memory by category: the rule of metrics/memory_categories.h on small hand-built snapshots.
#include "core/metrics/memory_categories.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tbm = tunebench::metrics;
using tbm::BlockState;

namespace {

// One segment at `address` whose blocks have these sizes and states, in order.
tbm::AllocatorSegment segment(uint64_t address, std::vector<std::pair<int64_t, BlockState>> blocks) {
  tbm::AllocatorSegment s;
  s.address = address;
  uint64_t a = address;
  for (const auto& [size, state] : blocks) {
    s.blocks.push_back({a, size, state});
    a += static_cast<uint64_t>(size);
    s.total_size += size;
  }
  return s;
}

constexpr uint64_t kBase = 0x7f0000000000;
constexpr auto kHeld = BlockState::ActiveAllocated;

}  // namespace

TEST(MemoryCategories, EachHeldBlockGoesToTheFirstCategoryThatClaimsIt) {
  tbm::AllocatorSnapshot s;
  s.segments.push_back(segment(kBase, {{1000, kHeld}, {200, kHeld}, {300, kHeld}, {400, kHeld}, {50, kHeld},
                                       {60, kHeld}, {70, kHeld}, {80, BlockState::Inactive},
                                       {90, BlockState::ActivePendingFree}}));
  const auto& b = s.segments[0].blocks;
  s.parameters = {{b[0].address + 10, 100}};
  // A block that holds a gradient and is also in the step's blocks is a gradient: the tensor wins.
  s.gradients = {{b[1].address, 200}};
  s.optimizer_state = {{b[2].address + 299, 1}};  // the range's start inside the block is enough
  s.communication = {{b[3].address, 400}};
  s.step_blocks = {b[1].address, b[4].address, b[5].address};
  s.forward_blocks = {b[4].address};
  const auto c = tbm::attribute_memory(s, "backward");
  EXPECT_EQ(c.phase, "backward");
  EXPECT_EQ(c.parameters_bytes, 1000);
  EXPECT_EQ(c.gradients_bytes, 200);
  EXPECT_EQ(c.optimizer_bytes, 300);
  EXPECT_EQ(c.communication_bytes, 400);
  EXPECT_EQ(c.activations_bytes, 50);
  EXPECT_EQ(c.temporaries_bytes, 60);
  EXPECT_EQ(c.unattributed_bytes, 70);
  EXPECT_EQ(c.reserved_free_bytes, 170);  // inactive and pending-free: held by no tensor
  EXPECT_EQ(c.allocated_bytes(), tbm::snapshot_allocated_bytes(s));
  EXPECT_EQ(c.allocated_bytes() + c.reserved_free_bytes, tbm::snapshot_reserved_bytes(s));
}

TEST(MemoryCategories, ARangeThatStartsOutsideEveryBlockClaimsNothing) {
  tbm::AllocatorSnapshot s;
  s.segments.push_back(segment(kBase, {{100, kHeld}}));
  s.parameters = {{kBase + 100, 10}, {kBase - 1, 10}};  // just past the block, and just before it
  const auto c = tbm::attribute_memory(s, "forward");
  EXPECT_EQ(c.parameters_bytes, 0);
  EXPECT_EQ(c.unattributed_bytes, 100);
}

TEST(MemoryCategories, InconsistentSnapshotsAreRefusedWithWhatIsWrong) {
  auto refused = [](const tbm::AllocatorSnapshot& s, const std::string& words) {
    EXPECT_NE(tbm::snapshot_problem(s).find(words), std::string::npos) << tbm::snapshot_problem(s);
    EXPECT_THROW(tbm::attribute_memory(s, "forward"), std::invalid_argument);
  };
  tbm::AllocatorSnapshot s;
  s.segments.push_back(segment(kBase, {{100, kHeld}, {-5, kHeld}}));
  s.segments[0].total_size = 200;
  refused(s, "block 1 of segment 0 has a size of -5 bytes");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}, {100, kHeld}}));
  s.segments[0].blocks[1].address -= 1;
  refused(s, "overlaps the block before it");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}, {100, kHeld}}));
  s.segments[0].blocks[1].address += 1;
  refused(s, "leaves a gap");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}}));
  s.segments.push_back(segment(kBase + 50, {{100, kHeld}}));
  refused(s, "two segments overlap");

  s = {};
  s.segments.push_back(segment(~uint64_t{0} - 10, {{100, kHeld}}));
  refused(s, "past the end of the address space");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}}));
  s.segments[0].total_size = 0;
  refused(s, "segment 0 has a size of 0 bytes");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}}));
  s.communication = {{kBase, -1}};
  refused(s, "communication range 0 has a negative size");

  s = {};
  s.segments.resize(tbm::kMaxSnapshotSegments + 1);
  refused(s, "segments (at most");

  s = {};
  s.segments.push_back(segment(kBase, {{100, kHeld}}));
  EXPECT_EQ(tbm::snapshot_problem(s), "");
}

TEST(MemoryCategories, TheViewsNamesFollowTheStructsOrder) {
  tunebench::protocol::MemoryCategories c;
  c.parameters_bytes = 1;
  c.gradients_bytes = 2;
  c.optimizer_bytes = 3;
  c.activations_bytes = 4;
  c.temporaries_bytes = 5;
  c.communication_bytes = 6;
  c.unattributed_bytes = 7;
  const auto named = tbm::category_bytes(c);
  ASSERT_EQ(named.size(), 7u);
  int64_t sum = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    EXPECT_EQ(named[i].second, static_cast<int64_t>(i + 1)) << named[i].first;
    sum += named[i].second;
  }
  EXPECT_EQ(sum, c.allocated_bytes());
}

TEST(MemoryCategories, TheLargestHeldBlocksAreNamedByTheSameRule) {
  tbm::AllocatorSnapshot s;
  s.segments.push_back(segment(kBase, {{10, kHeld}, {500, kHeld}, {300, BlockState::Inactive}, {200, kHeld}}));
  const auto& b = s.segments[0].blocks;
  s.parameters = {{b[3].address, 200}};
  s.step_blocks = {b[1].address};
  s.forward_blocks = {b[1].address};
  const auto top = tbm::largest_held_blocks(s, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0], (std::pair<int64_t, std::string>{500, "activations"}));
  EXPECT_EQ(top[1], (std::pair<int64_t, std::string>{200, "parameters"}));
  EXPECT_EQ(tbm::largest_held_blocks(s, 10).size(), 3u);  // free blocks are not listed
}
