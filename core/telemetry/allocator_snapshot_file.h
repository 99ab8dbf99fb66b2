// Allocator snapshot files: the caching allocator's blocks and what the worker knew at one moment
// (metrics::AllocatorSnapshot), as a small JSON document.
//
// The worker writes one when TUNEBENCH_MEMORY_SNAPSHOT=FILE is set (each memory-sampled step's and
// an out-of-memory moment's snapshot, replacing the file), `scripts/gpu-bench.sh hardware` records
// them for tests/data, and the tests read them back and attribute them. The format is documented
// in docs/PROTOCOL.md, "Allocator snapshot files". A file is a stranger's bytes: the reader checks
// its size, its JSON, every number's type and range and the snapshot's consistency
// (metrics::snapshot_problem), and refuses a bad one with a sentence, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/metrics/memory_categories.h"

namespace tunebench::telemetry {

inline constexpr const char* kSnapshotFormat = "tunebench-allocator-snapshot";
inline constexpr int kSnapshotFormatVersion = 1;
inline constexpr int64_t kMaxSnapshotFileBytes = int64_t{64} << 20;

// What a file says besides the blocks: free-form, for the person who reads it.
struct SnapshotMeta {
  std::string device;  // "NVIDIA H200"
  std::string phase;   // "forward", "backward", "optimizer", "oom"
  int64_t step = -1;
  std::string note;    // e.g. the preset and knobs it was recorded with
  // The allocator's own counters at the snapshot, when the writer knew them (-1: unknown).
  int64_t allocated_bytes = -1;
  int64_t reserved_bytes = -1;
};

struct SnapshotFile {
  metrics::AllocatorSnapshot snapshot;
  SnapshotMeta meta;
};

// The document of a snapshot (what write_snapshot_file writes).
nlohmann::json snapshot_to_json(const metrics::AllocatorSnapshot& snapshot, const SnapshotMeta& meta);
// Reads a document; throws std::invalid_argument with a sentence naming what is wrong.
SnapshotFile snapshot_from_json(const nlohmann::json& document);
// Parses text (at most kMaxSnapshotFileBytes); throws std::invalid_argument ("not JSON: ..." for
// truncated or malformed text).
SnapshotFile parse_snapshot(const std::string& text);

// Reads a file; throws std::invalid_argument naming the file and what is wrong with it.
SnapshotFile read_snapshot_file(const std::string& path);
// Writes a file (replacing it, through a temporary in the same folder); throws std::runtime_error.
void write_snapshot_file(const std::string& path, const metrics::AllocatorSnapshot& snapshot, const SnapshotMeta& meta);

}  // namespace tunebench::telemetry
