// Fuzz target: bytes as an allocator snapshot file from a stranger (tests/data/memory, what
// TUNEBENCH_MEMORY_SNAPSHOT writes; telemetry/allocator_snapshot_file.h).
//
// A document is refused with std::invalid_argument or read; a read one must attribute without
// throwing, its categories must sum to its held blocks and, with the free ones, to its segments,
// and writing it and reading it back must give the same document.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/metrics/memory_categories.h"
#include "core/telemetry/allocator_snapshot_file.h"

namespace tt = tunebench::telemetry;
namespace tm_ = tunebench::metrics;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tt::SnapshotFile f;
  try {
    f = tt::parse_snapshot(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const auto c = tm_::attribute_memory(f.snapshot, f.meta.phase);  // a read snapshot is consistent
  if (c.allocated_bytes() != tm_::snapshot_allocated_bytes(f.snapshot)) __builtin_trap();
  if (c.allocated_bytes() + c.reserved_free_bytes != tm_::snapshot_reserved_bytes(f.snapshot)) __builtin_trap();
  const auto doc = tt::snapshot_to_json(f.snapshot, f.meta);
  const auto again = tt::snapshot_from_json(doc);
  if (tt::snapshot_to_json(again.snapshot, again.meta) != doc) __builtin_trap();
  return 0;
}
