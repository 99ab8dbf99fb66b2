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

namespace {

enum class Category { Parameters, Gradients, Optimizer, Communication, Activations, Temporaries, Unattributed };

// The rule of the header, block by block.
class Classifier {
 public:
  explicit Classifier(const AllocatorSnapshot& s)
      : m_params(starts_of(s.parameters)),
        m_grads(starts_of(s.gradients)),
        m_optim(starts_of(s.optimizer_state)),
        m_comm(starts_of(s.communication)),
        m_step(s.step_blocks.begin(), s.step_blocks.end()),
        m_forward(s.forward_blocks.begin(), s.forward_blocks.end()) {}
  Category of(const AllocatorBlock& b) const {
    if (starts_inside(m_params, b)) return Category::Parameters;
    if (starts_inside(m_grads, b)) return Category::Gradients;
    if (starts_inside(m_optim, b)) return Category::Optimizer;
    if (starts_inside(m_comm, b)) return Category::Communication;
    if (m_forward.count(b.address) != 0) return Category::Activations;
    if (m_step.count(b.address) != 0) return Category::Temporaries;
    return Category::Unattributed;
  }

 private:
  std::vector<uint64_t> m_params, m_grads, m_optim, m_comm;
  std::unordered_set<uint64_t> m_step, m_forward;
};

const char* name_of(Category c) {
  switch (c) {
    case Category::Parameters: return "parameters";
    case Category::Gradients: return "gradients";
    case Category::Optimizer: return "optimizer state";
    case Category::Communication: return "communication";
    case Category::Activations: return "activations";
    case Category::Temporaries: return "temporaries";
    case Category::Unattributed: return "unattributed";
  }
  return "unattributed";
}

void refuse_if_inconsistent(const AllocatorSnapshot& s) {
  if (const std::string problem = snapshot_problem(s); !problem.empty())
    throw std::invalid_argument("allocator snapshot refused: " + problem);
}

}  // namespace

protocol::MemoryCategories attribute_memory(const AllocatorSnapshot& s, const std::string& phase) {
  refuse_if_inconsistent(s);
  const Classifier classify(s);
  protocol::MemoryCategories c;
  c.phase = phase;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks) {
      if (b.state != BlockState::ActiveAllocated) {
        c.reserved_free_bytes += b.size;
        continue;
      }
      switch (classify.of(b)) {
        case Category::Parameters: c.parameters_bytes += b.size; break;
        case Category::Gradients: c.gradients_bytes += b.size; break;
        case Category::Optimizer: c.optimizer_bytes += b.size; break;
        case Category::Communication: c.communication_bytes += b.size; break;
        case Category::Activations: c.activations_bytes += b.size; break;
        case Category::Temporaries: c.temporaries_bytes += b.size; break;
        case Category::Unattributed: c.unattributed_bytes += b.size; break;
      }
    }
  return c;
}

std::vector<std::pair<int64_t, std::string>> largest_held_blocks(const AllocatorSnapshot& s, size_t n) {
  refuse_if_inconsistent(s);
  const Classifier classify(s);
  std::vector<const AllocatorBlock*> held;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks)
      if (b.state == BlockState::ActiveAllocated) held.push_back(&b);
  const size_t k = std::min(n, held.size());
  std::partial_sort(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(k), held.end(),
                    [](const AllocatorBlock* a, const AllocatorBlock* b) { return a->size > b->size; });
  std::vector<std::pair<int64_t, std::string>> out;
  for (size_t i = 0; i < k; ++i) out.emplace_back(held[i]->size, name_of(classify.of(*held[i])));
  return out;
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
