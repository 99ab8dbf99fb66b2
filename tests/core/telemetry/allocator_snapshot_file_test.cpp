// Allocator snapshot files: every file of tests/data/memory is attributed, with the expected
// categories recomputed here from its raw blocks (a naive second reading of the document, not the
// product's reader); hostile documents are refused with a sentence; a snapshot survives a write
// and a read.
#include "core/telemetry/allocator_snapshot_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/metrics/memory_categories.h"

namespace tt = tunebench::telemetry;
namespace tbm = tunebench::metrics;
using nlohmann::json;

namespace {

std::vector<std::string> snapshot_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TUNEBENCH_TEST_DATA_DIR) + "/memory"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The categories by the rule of metrics/memory_categories.h, computed the slow way from the JSON.
struct Expected {
  int64_t parameters = 0, gradients = 0, optimizer = 0, communication = 0, activations = 0, temporaries = 0,
          unattributed = 0, reserved_free = 0, allocated = 0;
};
Expected expected_from(const json& doc) {
  Expected e;
  auto any_starts_in = [&](const char* key, uint64_t a, uint64_t size) {
    for (const auto& r : doc.value(key, json::array()))
      if (r[0].get<uint64_t>() >= a && r[0].get<uint64_t>() < a + size) return true;
    return false;
  };
  auto listed = [&](const char* key, uint64_t a) {
    for (const auto& x : doc.value(key, json::array()))
      if (x.get<uint64_t>() == a) return true;
    return false;
  };
  for (const auto& seg : doc["segments"])
    for (const auto& b : seg["blocks"]) {
      const uint64_t a = b["address"].get<uint64_t>();
      const int64_t size = b["size"].get<int64_t>();
      if (b["state"] != "active_allocated") {
        e.reserved_free += size;
        continue;
      }
      e.allocated += size;
      if (any_starts_in("parameters", a, size)) e.parameters += size;
      else if (any_starts_in("gradients", a, size)) e.gradients += size;
      else if (any_starts_in("optimizer_state", a, size)) e.optimizer += size;
      else if (any_starts_in("communication", a, size)) e.communication += size;
      else if (listed("forward_blocks", a)) e.activations += size;
      else if (listed("step_blocks", a)) e.temporaries += size;
      else e.unattributed += size;
    }
  return e;
}

void expect_refused(const std::string& text, const std::string& words) {
  try {
    tt::parse_snapshot(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what() << "\n(expected: " << words << ")";
  }
}

json small_document() {
  return json::parse(read_text(std::string(TUNEBENCH_TEST_DATA_DIR) + "/memory/synthetic-forward.json"));
}

}  // namespace

TEST(AllocatorSnapshotFile, EveryRecordedSnapshotIsAttributedAsItsRawBlocksSay) {
  const auto files = snapshot_files();
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    const json doc = json::parse(read_text(path));
    const Expected e = expected_from(doc);
    const tt::SnapshotFile f = tt::read_snapshot_file(path);
    const auto c = tbm::attribute_memory(f.snapshot, f.meta.phase);
    EXPECT_EQ(c.phase, doc["phase"].get<std::string>());
    EXPECT_EQ(c.parameters_bytes, e.parameters);
    EXPECT_EQ(c.gradients_bytes, e.gradients);
    EXPECT_EQ(c.optimizer_bytes, e.optimizer);
    EXPECT_EQ(c.communication_bytes, e.communication);
    EXPECT_EQ(c.activations_bytes, e.activations);
    EXPECT_EQ(c.temporaries_bytes, e.temporaries);
    EXPECT_EQ(c.unattributed_bytes, e.unattributed);
    EXPECT_EQ(c.reserved_free_bytes, e.reserved_free);
    // The categories sum to the allocated blocks, and to the allocator's own counter where the
    // recording has it (a real snapshot is read right after the counters, on the same thread).
    EXPECT_EQ(c.allocated_bytes(), e.allocated);
    EXPECT_EQ(tbm::snapshot_allocated_bytes(f.snapshot), e.allocated);
    if (f.meta.allocated_bytes >= 0) {
      EXPECT_EQ(c.allocated_bytes(), f.meta.allocated_bytes);
    }
    if (f.meta.reserved_bytes >= 0) {
      EXPECT_EQ(tbm::snapshot_reserved_bytes(f.snapshot), f.meta.reserved_bytes);
    }
  }
}

TEST(AllocatorSnapshotFile, SurvivesAWriteAndARead) {
  const auto original = tt::snapshot_from_json(small_document());
  const std::string path = std::filesystem::temp_directory_path() / ("tb-snapshot-" + std::to_string(::getpid()) + ".json");
  tt::write_snapshot_file(path, original.snapshot, original.meta);
  const auto back = tt::read_snapshot_file(path);
  std::filesystem::remove(path);
  EXPECT_EQ(tt::snapshot_to_json(back.snapshot, back.meta), tt::snapshot_to_json(original.snapshot, original.meta));
  EXPECT_EQ(tbm::attribute_memory(back.snapshot, "forward"), tbm::attribute_memory(original.snapshot, "forward"));
}

TEST(AllocatorSnapshotFile, HostileDocumentsAreRefusedWithASentence) {
  const std::string text = small_document().dump();
  expect_refused(text.substr(0, text.size() / 2), "not JSON (truncated?)");
  expect_refused("", "not JSON");
  expect_refused("[1, 2]", "not a JSON object");
  expect_refused(R"({"format": "something else", "version": 1, "segments": []})", "not an allocator snapshot");
  expect_refused(R"({"format": "tunebench-allocator-snapshot", "version": 2, "segments": []})", "another version");
  expect_refused(R"({"format": "tunebench-allocator-snapshot", "version": 1})", "'segments' is missing");
  expect_refused(std::string(100, '[') + std::string(100, ']'), "nested deeper");

  json doc = small_document();
  doc["segments"][0]["blocks"][1]["size"] = -4096;
  expect_refused(doc.dump(), "block 1 of segment 0 has a size of -4096 bytes");

  doc = small_document();  // a block that starts inside the one before it
  doc["segments"][1]["blocks"][2]["address"] = doc["segments"][1]["blocks"][2]["address"].get<uint64_t>() - 512;
  expect_refused(doc.dump(), "block 2 of segment 1 overlaps the block before it");

  doc = small_document();  // two segments over the same addresses
  doc["segments"][1]["address"] = doc["segments"][0]["address"];
  {
    uint64_t a = doc["segments"][0]["address"].get<uint64_t>();
    for (auto& b : doc["segments"][1]["blocks"]) {
      b["address"] = a;
      a += b["size"].get<uint64_t>();
    }
  }
  expect_refused(doc.dump(), "two segments overlap");

  doc = small_document();
  doc["segments"][2]["total_size"] = doc["segments"][2]["total_size"].get<int64_t>() + 4096;
  expect_refused(doc.dump(), "do not fill it");

  doc = small_document();
  doc["segments"][0]["total_size"] = 1e30;
  expect_refused(doc.dump(), "segment 0's total_size is not an integer");

  doc = small_document();
  doc["segments"][0]["address"] = -1;
  expect_refused(doc.dump(), "negative address");

  doc = small_document();
  doc["segments"][0]["address"] = uint64_t{18446744073709551615ull} - 1024;
  expect_refused(doc.dump(), "runs past the end of the address space");

  doc = small_document();
  doc["parameters"][0][1] = -1;
  expect_refused(doc.dump(), "parameter range 0 has a negative size");

  doc = small_document();
  doc["segments"][0]["blocks"][0]["state"] = "borrowed";
  expect_refused(doc.dump(), "unknown state 'borrowed'");

  // Huge counts: more segments than a snapshot may hold is refused before any is converted.
  json many = {{"format", "tunebench-allocator-snapshot"}, {"version", 1}, {"segments", json::array()}};
  for (size_t i = 0; i <= tbm::kMaxSnapshotSegments; ++i) many["segments"].push_back(0);
  expect_refused(many.dump(), "at most " + std::to_string(tbm::kMaxSnapshotSegments));
  // ... and a file larger than any snapshot is refused before it is parsed.
  expect_refused(std::string(static_cast<size_t>(tt::kMaxSnapshotFileBytes) + 1, ' '), "at most");
}

TEST(AllocatorSnapshotFile, AMissingFileIsNamed) {
  try {
    tt::read_snapshot_file("/nonexistent/snapshot.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/snapshot.json: cannot be opened"), std::string::npos);
  }
}
