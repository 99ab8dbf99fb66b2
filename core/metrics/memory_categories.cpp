#include "core/metrics/memory_categories.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace tunebench::metrics {
namespace {

constexpr uint64_t kMaxAddress = std::numeric_limits<uint64_t>::max();

// Whether [address, address + size) does not fit below 2^64 (its end must be representable).
bool wraps(uint64_t address, int64_t size) { return size > 0 && static_cast<uint64_t>(size) > kMaxAddress - address; }

std::string ranges_problem(const std::vector<AddressRange>& ranges, const char* what) {
  if (ranges.size() > kMaxSnapshotRanges)
    return std::to_string(ranges.size()) + " " + what + " ranges (at most " + std::to_string(kMaxSnapshotRanges) + ")";
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].size < 0)
      return std::string(what) + " range " + std::to_string(i) + " has a negative size (" +
             std::to_string(ranges[i].size) + ")";
    if (wraps(ranges[i].address, ranges[i].size))
      return std::string(what) + " range " + std::to_string(i) + " runs past the end of the address space";
  }
  return {};
}

// Sorted start addresses of a category's ranges: a block owns the category when one starts inside it.
std::vector<uint64_t> starts_of(const std::vector<AddressRange>& ranges) {
  std::vector<uint64_t> out;
  out.reserve(ranges.size());
  for (const auto& r : ranges) out.push_back(r.address);
  std::sort(out.begin(), out.end());
  return out;
}

bool starts_inside(const std::vector<uint64_t>& starts, const AllocatorBlock& b) {
  const auto it = std::lower_bound(starts.begin(), starts.end(), b.address);
  return it != starts.end() && *it - b.address < static_cast<uint64_t>(b.size);
}

}  // namespace

std::string snapshot_problem(const AllocatorSnapshot& s) {
  if (s.segments.size() > kMaxSnapshotSegments)
    return std::to_string(s.segments.size()) + " segments (at most " + std::to_string(kMaxSnapshotSegments) + ")";
  size_t blocks = 0;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [start, end) of each segment
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const AllocatorSegment& seg = s.segments[i];
    const std::string name = "segment " + std::to_string(i);
    if (seg.total_size <= 0) return name + " has a size of " + std::to_string(seg.total_size) + " bytes";
    if (wraps(seg.address, seg.total_size)) return name + " runs past the end of the address space";
    blocks += seg.blocks.size();
    if (blocks > kMaxSnapshotBlocks) return "more than " + std::to_string(kMaxSnapshotBlocks) + " blocks";
    if (seg.blocks.empty()) return name + " has no blocks";
    const uint64_t end = seg.address + static_cast<uint64_t>(seg.total_size);  // no wrap: checked above
    uint64_t expected = seg.address;
    for (size_t b = 0; b < seg.blocks.size(); ++b) {
      const AllocatorBlock& block = seg.blocks[b];
      const std::string bname = "block " + std::to_string(b) + " of " + name;
      if (block.size <= 0) return bname + " has a size of " + std::to_string(block.size) + " bytes";
      if (block.address < expected) return bname + " overlaps the block before it";
      if (block.address > expected) return bname + " leaves a gap after the block before it";
      if (static_cast<uint64_t>(block.size) > end - block.address) return bname + " reaches past the end of its segment";
      expected = block.address + static_cast<uint64_t>(block.size);
    }
    if (expected != end) return "the blocks of " + name + " do not fill it";
    spans.emplace_back(seg.address, end);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) return "two segments overlap";
  for (const auto& [ranges, what] : {std::pair{&s.parameters, "parameter"}, std::pair{&s.gradients, "gradient"},
                                     std::pair{&s.optimizer_state, "optimizer-state"},
                                     std::pair{&s.communication, "communication"}})
    if (auto p = ranges_problem(*ranges, what); !p.empty()) return p;
  if (s.step_blocks.size() > kMaxSnapshotBlocks || s.forward_blocks.size() > kMaxSnapshotBlocks)
    return "more than " + std::to_string(kMaxSnapshotBlocks) + " step or forward blocks";
  return {};
}

protocol::MemoryCategories attribute_memory(const AllocatorSnapshot& s, const std::string& phase) {
  if (const std::string problem = snapshot_problem(s); !problem.empty())
    throw std::invalid_argument("allocator snapshot refused: " + problem);
  const auto params = starts_of(s.parameters);
  const auto grads = starts_of(s.gradients);
  const auto optim = starts_of(s.optimizer_state);
  const auto comm = starts_of(s.communication);
  const std::unordered_set<uint64_t> in_step(s.step_blocks.begin(), s.step_blocks.end());
  const std::unordered_set<uint64_t> in_forward(s.forward_blocks.begin(), s.forward_blocks.end());
  protocol::MemoryCategories c;
  c.phase = phase;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks) {
      if (b.state != BlockState::ActiveAllocated) {
        c.reserved_free_bytes += b.size;
        continue;
      }
      int64_t& into = starts_inside(params, b)           ? c.parameters_bytes
                      : starts_inside(grads, b)          ? c.gradients_bytes
                      : starts_inside(optim, b)          ? c.optimizer_bytes
                      : starts_inside(comm, b)           ? c.communication_bytes
                      : in_forward.count(b.address) != 0 ? c.activations_bytes
                      : in_step.count(b.address) != 0    ? c.temporaries_bytes
                                                         : c.unattributed_bytes;
      into += b.size;
    }
  return c;
}

int64_t snapshot_allocated_bytes(const AllocatorSnapshot& s) {
  int64_t total = 0;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks)
      if (b.state == BlockState::ActiveAllocated) total += b.size;
  return total;
}

int64_t snapshot_reserved_bytes(const AllocatorSnapshot& s) {
  int64_t total = 0;
  for (const auto& seg : s.segments) total += seg.total_size;
  return total;
}

std::vector<std::pair<std::string, int64_t>> category_bytes(const protocol::MemoryCategories& c) {
  return {{"parameters", c.parameters_bytes},   {"gradients", c.gradients_bytes},
          {"optimizer state", c.optimizer_bytes}, {"activations", c.activations_bytes},
          {"temporaries", c.temporaries_bytes}, {"communication", c.communication_bytes},
          {"unattributed", c.unattributed_bytes}};
}

}  // namespace tunebench::metrics
