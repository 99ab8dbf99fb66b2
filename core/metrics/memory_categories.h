// Memory by category: which live allocator blocks hold parameters, gradients, optimizer state,
// activations, temporaries and collective buffers, defined once.
//
// The input is what the worker's CUDA build reads from libtorch's caching allocator at one moment
// (its segments and their blocks, no stack traces) and what it knows at that moment: the address
// ranges of the parameters, gradients, optimizer state and collective buffers, and which live
// blocks were allocated since the step began and, of those, during the forward. The same
// structure is the content of an allocator snapshot file (telemetry/allocator_snapshot_file.h),
// so recorded snapshots drive the tests.
//
// Attribution is by block: one allocation is one block, and a tensor's bytes lie inside the block
// of its storage. An allocated block belongs to the first of these that applies:
//   parameters     a parameter range starts inside it
//   gradients      a gradient range starts inside it
//   optimizer      an optimizer-state range starts inside it
//   communication  a collective buffer's range starts inside it
//   activations    it was allocated during the forward of this step (and is alive now)
//   temporaries    it was allocated during this step, outside the forward
//   unattributed   none of these: alive from before the step and not a known tensor
// Blocks of the reserve that no tensor holds (inactive, or freed and waiting for their stream)
// are reserved_free_bytes. The seven categories therefore sum to the allocated blocks' bytes,
// which is the allocator's allocated_bytes at that moment.
//
// Deliberately no JSON, no libtorch and no I/O here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::metrics {

enum class BlockState {
  ActiveAllocated,    // held by a tensor
  ActivePendingFree,  // freed by its tensor, waiting for a stream that used it
  Inactive,           // free, cached by the allocator
};

struct AllocatorBlock {
  uint64_t address = 0;
  int64_t size = 0;  // bytes
  BlockState state = BlockState::Inactive;
};

// One cudaMalloc (or expandable segment): its blocks tile it in address order.
struct AllocatorSegment {
  uint64_t address = 0;
  int64_t total_size = 0;
  int64_t stream = 0;  // the stream it serves, as an id
  std::vector<AllocatorBlock> blocks;
};

struct AddressRange {
  uint64_t address = 0;
  int64_t size = 0;
};

struct AllocatorSnapshot {
  std::vector<AllocatorSegment> segments;
  // What the worker knew when it read the allocator.
  std::vector<AddressRange> parameters;
  std::vector<AddressRange> gradients;
  std::vector<AddressRange> optimizer_state;
  std::vector<AddressRange> communication;
  std::vector<uint64_t> step_blocks;     // start addresses of blocks allocated since the step began
  std::vector<uint64_t> forward_blocks;  // of those, the ones allocated during the forward
};

// Bounds a snapshot must respect (a 7B single-GPU step has a few thousand blocks; an allocator
// snapshot of the largest runs measured stays below a hundred thousand).
inline constexpr size_t kMaxSnapshotSegments = 1 << 16;
inline constexpr size_t kMaxSnapshotBlocks = 1 << 20;
inline constexpr size_t kMaxSnapshotRanges = 1 << 20;

// Empty when the snapshot is consistent; else one sentence saying what is wrong: too many
// segments, blocks or ranges; a segment or block of non-positive size; an address range that wraps
// past 2^64; blocks that do not tile their segment (a gap, an overlap, a block outside it);
// segments that overlap; a range of negative size.
std::string snapshot_problem(const AllocatorSnapshot& snapshot);

// The live bytes by category (header comment), with `phase` as given. Throws
// std::invalid_argument with snapshot_problem's sentence when the snapshot is inconsistent.
protocol::MemoryCategories attribute_memory(const AllocatorSnapshot& snapshot, const std::string& phase);

// The `n` largest held blocks, largest first: their bytes and category name (category_bytes'
// names). Throws as attribute_memory does.
std::vector<std::pair<int64_t, std::string>> largest_held_blocks(const AllocatorSnapshot& snapshot, size_t n);

// The allocated (held) and reserved bytes of a snapshot.
int64_t snapshot_allocated_bytes(const AllocatorSnapshot& snapshot);
int64_t snapshot_reserved_bytes(const AllocatorSnapshot& snapshot);

// The names of the categories as the views print them, in MemoryCategories' order, and their
// bytes: {"parameters", bytes}, ... {"unattributed", bytes} (reserved_free is not a category).
std::vector<std::pair<std::string, int64_t>> category_bytes(const protocol::MemoryCategories& categories);

}  // namespace tunebench::metrics
