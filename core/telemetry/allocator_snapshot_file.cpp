#include "core/telemetry/allocator_snapshot_file.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/protocol/event_reader.h"

namespace tunebench::telemetry {
namespace {

using nlohmann::json;
using metrics::AllocatorBlock;
using metrics::AllocatorSegment;
using metrics::AllocatorSnapshot;
using metrics::BlockState;

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

const char* state_name(BlockState s) {
  switch (s) {
    case BlockState::ActiveAllocated: return "active_allocated";
    case BlockState::ActivePendingFree: return "active_pending_free";
    case BlockState::Inactive: return "inactive";
  }
  return "inactive";
}

BlockState state_from(const json& j, const std::string& where) {
  if (!j.is_string()) refuse(where + ": 'state' is not a string");
  const std::string s = j.get<std::string>();
  if (s == "active_allocated") return BlockState::ActiveAllocated;
  if (s == "active_pending_free") return BlockState::ActivePendingFree;
  if (s == "inactive") return BlockState::Inactive;
  refuse(where + ": unknown state '" + s.substr(0, 40) + "'");
}

const json& member(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) refuse(where + ": '" + key + "' is missing");
  return *it;
}

// An address: an integer 0 .. 2^64-1 (JSON numbers; nlohmann keeps unsigned 64-bit exactly).
uint64_t address_from(const json& j, const std::string& where) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    if (v < 0) refuse(where + " is a negative address (" + std::to_string(v) + ")");
    return static_cast<uint64_t>(v);
  }
  refuse(where + " is not an integer address");
}

// A size or count: an integer that fits int64 (a negative one is returned; the consistency check
// names it).
int64_t integer_from(const json& j, const std::string& where) {
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) refuse(where + " is out of range");
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  refuse(where + " is not an integer");
}

const json& array_of(const json& j, const char* key, size_t max, const std::string& where) {
  const json& a = member(j, key, where);
  if (!a.is_array()) refuse(where + ": '" + key + "' is not an array");
  if (a.size() > max)
    refuse(where + ": '" + key + "' holds " + std::to_string(a.size()) + " entries (at most " + std::to_string(max) + ")");
  return a;
}

std::vector<metrics::AddressRange> ranges_from(const json& doc, const char* key) {
  std::vector<metrics::AddressRange> out;
  if (!doc.contains(key)) return out;
  const json& a = array_of(doc, key, metrics::kMaxSnapshotRanges, "the snapshot");
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!a[i].is_array() || a[i].size() != 2) refuse(where + " is not [address, size]");
    out.push_back({address_from(a[i][0], where + "'s address"), integer_from(a[i][1], where + "'s size")});
  }
  return out;
}

std::vector<uint64_t> addresses_from(const json& doc, const char* key) {
  std::vector<uint64_t> out;
  if (!doc.contains(key)) return out;
  const json& a = array_of(doc, key, metrics::kMaxSnapshotBlocks, "the snapshot");
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) out.push_back(address_from(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

json ranges_to_json(const std::vector<metrics::AddressRange>& ranges) {
  json a = json::array();
  for (const auto& r : ranges) a.push_back({r.address, r.size});
  return a;
}

}  // namespace

json snapshot_to_json(const AllocatorSnapshot& s, const SnapshotMeta& meta) {
  json doc = {{"format", kSnapshotFormat}, {"version", kSnapshotFormatVersion}, {"device", meta.device},
              {"phase", meta.phase},       {"step", meta.step},                   {"note", meta.note}};
  if (meta.allocated_bytes >= 0) doc["allocated_bytes"] = meta.allocated_bytes;
  if (meta.reserved_bytes >= 0) doc["reserved_bytes"] = meta.reserved_bytes;
  json segments = json::array();
  for (const auto& seg : s.segments) {
    json blocks = json::array();
    for (const auto& b : seg.blocks) blocks.push_back({{"address", b.address}, {"size", b.size}, {"state", state_name(b.state)}});
    segments.push_back({{"address", seg.address}, {"total_size", seg.total_size}, {"stream", seg.stream}, {"blocks", blocks}});
  }
  doc["segments"] = std::move(segments);
  doc["parameters"] = ranges_to_json(s.parameters);
  doc["gradients"] = ranges_to_json(s.gradients);
  doc["optimizer_state"] = ranges_to_json(s.optimizer_state);
  doc["communication"] = ranges_to_json(s.communication);
  doc["step_blocks"] = s.step_blocks;
  doc["forward_blocks"] = s.forward_blocks;
  return doc;
}

SnapshotFile snapshot_from_json(const json& doc) {
  if (!doc.is_object()) refuse("the snapshot is not a JSON object");
  const auto format = doc.find("format");
  if (format == doc.end() || *format != kSnapshotFormat)
    refuse(std::string("not an allocator snapshot ('format' is not \"") + kSnapshotFormat + "\")");
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<int64_t>() != kSnapshotFormatVersion)
    refuse("an allocator snapshot of another version (this reader knows version " +
           std::to_string(kSnapshotFormatVersion) + ")");
  SnapshotFile f;
  auto text = [&](const char* key, std::string& out) {
    if (const auto it = doc.find(key); it != doc.end() && it->is_string()) out = it->get<std::string>().substr(0, 4096);
  };
  text("device", f.meta.device);
  text("phase", f.meta.phase);
  text("note", f.meta.note);
  if (const auto it = doc.find("step"); it != doc.end()) f.meta.step = integer_from(*it, "'step'");
  if (const auto it = doc.find("allocated_bytes"); it != doc.end()) f.meta.allocated_bytes = integer_from(*it, "'allocated_bytes'");
  if (const auto it = doc.find("reserved_bytes"); it != doc.end()) f.meta.reserved_bytes = integer_from(*it, "'reserved_bytes'");

  const json& segments = array_of(doc, "segments", metrics::kMaxSnapshotSegments, "the snapshot");
  size_t blocks_total = 0;
  f.snapshot.segments.reserve(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string where = "segment " + std::to_string(i);
    const json& js = segments[i];
    if (!js.is_object()) refuse(where + " is not an object");
    AllocatorSegment seg;
    seg.address = address_from(member(js, "address", where), where + "'s address");
    seg.total_size = integer_from(member(js, "total_size", where), where + "'s total_size");
    if (const auto it = js.find("stream"); it != js.end()) seg.stream = integer_from(*it, where + "'s stream");
    const json& jb = array_of(js, "blocks", metrics::kMaxSnapshotBlocks, where);
    blocks_total += jb.size();
    if (blocks_total > metrics::kMaxSnapshotBlocks)
      refuse("more than " + std::to_string(metrics::kMaxSnapshotBlocks) + " blocks");
    seg.blocks.reserve(jb.size());
    for (size_t b = 0; b < jb.size(); ++b) {
      const std::string bwhere = "block " + std::to_string(b) + " of " + where;
      if (!jb[b].is_object()) refuse(bwhere + " is not an object");
      AllocatorBlock block;
      block.address = address_from(member(jb[b], "address", bwhere), bwhere + "'s address");
      block.size = integer_from(member(jb[b], "size", bwhere), bwhere + "'s size");
      block.state = state_from(member(jb[b], "state", bwhere), bwhere);
      seg.blocks.push_back(block);
    }
    f.snapshot.segments.push_back(std::move(seg));
  }
  f.snapshot.parameters = ranges_from(doc, "parameters");
  f.snapshot.gradients = ranges_from(doc, "gradients");
  f.snapshot.optimizer_state = ranges_from(doc, "optimizer_state");
  f.snapshot.communication = ranges_from(doc, "communication");
  f.snapshot.step_blocks = addresses_from(doc, "step_blocks");
  f.snapshot.forward_blocks = addresses_from(doc, "forward_blocks");
  if (const std::string problem = metrics::snapshot_problem(f.snapshot); !problem.empty()) refuse(problem);
  return f;
}

SnapshotFile parse_snapshot(const std::string& text) {
  if (static_cast<int64_t>(text.size()) > kMaxSnapshotFileBytes)
    refuse("the snapshot is " + std::to_string(text.size()) + " bytes (at most " + std::to_string(kMaxSnapshotFileBytes) + ")");
  json doc;
  // A snapshot nests four levels; a document nested deeper is refused before it is parsed, and
  // again while it is read, before it can become a deep tree.
  constexpr int kMaxDepth = 16;
  if (!protocol::json_nesting_within(text, kMaxDepth))
    refuse("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  const json::parser_callback_t depth_guard = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) refuse("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return true;
  };
  try {
    doc = json::parse(text, depth_guard);
  } catch (const json::exception& e) {  // a syntax error, or a number too large for 64 bits
    refuse(std::string("not JSON (truncated?): ") + e.what());
  }
  return snapshot_from_json(doc);
}

SnapshotFile read_snapshot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path + ": cannot be opened");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) refuse(path + ": cannot be read");
  if (size > kMaxSnapshotFileBytes)
    refuse(path + ": " + std::to_string(size) + " bytes, more than an allocator snapshot may hold (" +
           std::to_string(kMaxSnapshotFileBytes) + ")");
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) refuse(path + ": cannot be read");
  try {
    return parse_snapshot(text);
  } catch (const std::invalid_argument& e) {
    refuse(path + ": " + e.what());
  }
}

void write_snapshot_file(const std::string& path, const AllocatorSnapshot& snapshot, const SnapshotMeta& meta) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << snapshot_to_json(snapshot, meta).dump() << "\n";
    if (!out) throw std::runtime_error("cannot write the allocator snapshot " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot replace " + path);
}

}  // namespace tunebench::telemetry
