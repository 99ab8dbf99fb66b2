// Schema versions: a file written by the first schema opens, migrates to the current one with its
// data intact, and ends up with exactly the schema a new file has.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/event_inserter.h"
#include "core/store/schema.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

namespace {

// A session as the first release wrote it: schema 1, no tags table.
int64_t make_version1_file(const std::string& path, const tunebench::protocol::TrialLog& log) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  ts::migrate(db, 0, 1);
  db.exec("INSERT INTO session (id, name, created_us) VALUES (1, 'from v1', 1700000000000000)");
  db.exec("INSERT INTO trials (name, config, status, created_us) "
          "VALUES ('old trial', '{\"strategy\":\"fsdp\"}', 'done', 1700000000000001)");
  const int64_t id = db.getLastInsertRowid();
  ts::EventInserter inserter(db, id);
  inserter.insert_log(log);
  db.exec("PRAGMA journal_mode = WAL");
  return id;
}

}  // namespace

TEST(Schema, MigratedFileEqualsNewFile) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE);
  ts::migrate(db, 0, 1);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(1));
  ts::migrate(db, 1, 2);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(2));
  EXPECT_NE(ts::expected_schema(1), ts::expected_schema(2));
  ts::migrate(db, 2, 3);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(3));
  EXPECT_NE(ts::expected_schema(2), ts::expected_schema(3));
  ts::migrate(db, 3, 4);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(4));
  EXPECT_NE(ts::expected_schema(3), ts::expected_schema(4));
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 4);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), ts::kApplicationId);
}

TEST(Schema, OpensAndMigratesAVersion1Session) {
  tt::TempDir dir;
  const auto path = dir.file("v1.tbsession");
  const auto log = tt::log_of(tt::full_trial(2, 4));
  const int64_t id = make_version1_file(path, log);

  {  // Read-only: readable as it is, and not migrated.
    const std::string before = tt::read_bytes(path);
    auto ro = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(ro.info().schema_version, 1);
    EXPECT_TRUE(ro.trial(id).tags.empty());
    EXPECT_EQ(tt::canonical(ro.load_trial(id).log), tt::canonical(log));
    EXPECT_EQ(tt::read_bytes(path), before);
  }
  {
    // Read-write, but only read: the file stays a version-1 file, byte for byte (an older build
    // would otherwise call its own file newer).
    const std::string before = tt::read_bytes(path);
    auto store = ts::SessionStore::open(path);
    EXPECT_TRUE(store.needs_upgrade());
    EXPECT_EQ(store.info().schema_version, 1);
    EXPECT_EQ(store.info().name, "from v1");
    const auto t = store.load_trial(id);
    EXPECT_EQ(t.info.name, "old trial");
    EXPECT_EQ(t.info.config["strategy"], "fsdp");
    EXPECT_EQ(tt::canonical(t.log), tt::canonical(log));
    EXPECT_EQ(store.list_trials().size(), 1u);
    EXPECT_EQ(tt::read_bytes(path), before);
    // The first change migrates.
    store.set_trial_tags(id, {"migrated"});  // the table version 2 added works
    EXPECT_FALSE(store.needs_upgrade());
    EXPECT_EQ(store.info().schema_version, ts::kSchemaVersion);
    EXPECT_EQ(store.trial(id).tags, std::vector<std::string>{"migrated"});
  }
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), ts::kSchemaVersion);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(ts::kSchemaVersion));
}

TEST(Schema, Version3KeepsEachRanksInterconnect) {
  tt::TempDir dir;
  const auto path = dir.file("topology.tbsession");
  int64_t id = 0;
  {
    auto store = ts::SessionStore::create(path, "topology");
    id = store.add_trial("t", nlohmann::json::object());
  }
  auto events = tt::full_trial(2, 2);
  for (auto& e : events)
    if (e.is<tunebench::protocol::Hello>())
      e.as<tunebench::protocol::Hello>().topology = "GPU0: 18 NVLink links; rank " + std::to_string(e.header.rank);
  {
    ts::TrialWriter w(path, id);
    for (const auto& e : events) w.add(e);
    w.finish(ts::TrialStatus::Done, "");
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto t = store.load_trial(id);
  ASSERT_TRUE(t.log.ranks.at(0).hello && t.log.ranks.at(1).hello);
  EXPECT_EQ(t.log.ranks.at(0).hello->topology, "GPU0: 18 NVLink links; rank 0");
  EXPECT_EQ(t.log.ranks.at(1).hello->topology, "GPU0: 18 NVLink links; rank 1");
}
