// Schema versions: a file written by the first schema opens, migrates to the current one with its
// data intact, and ends up with exactly the schema a new file has.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/event_inserter.h"
#include "core/store/plans.h"
#include "core/store/store_error.h"
#include "core/store/schema.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

namespace {

// A session as the build of schema `version` wrote it (its own tables only), holding one trial.
int64_t make_version_file(const std::string& path, int version, const tunebench::protocol::TrialLog& log,
                          const std::string& session_name = "older", const std::string& strategy = "ddp") {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  ts::migrate(db, 0, version);
  SQLite::Statement session(db, "INSERT INTO session (id, name, created_us) VALUES (1, ?, 1700000000000000)");
  session.bind(1, session_name);
  session.exec();
  SQLite::Statement trial(db, "INSERT INTO trials (name, config, status, created_us) "
                              "VALUES ('old trial', ?, 'done', 1700000000000001)");
  trial.bind(1, nlohmann::json{{"strategy", strategy}}.dump());
  trial.exec();
  const int64_t id = db.getLastInsertRowid();
  ts::EventInserter inserter(db, id);
  inserter.insert_log(log);
  db.exec("PRAGMA journal_mode = WAL");
  return id;
}

// A session as the first release wrote it: schema 1, no tags table.
int64_t make_version1_file(const std::string& path, const tunebench::protocol::TrialLog& log) {
  return make_version_file(path, 1, log, "from v1", "fsdp");
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
  ts::migrate(db, 4, 5);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(5));
  EXPECT_NE(ts::expected_schema(4), ts::expected_schema(5));
  ts::migrate(db, 5, 6);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(6));
  EXPECT_NE(ts::expected_schema(5), ts::expected_schema(6));
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 6);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), ts::kApplicationId);
  ts::migrate(db, 6, 7);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(7));
  ts::migrate(db, 7, 8);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(8));
  EXPECT_NE(ts::expected_schema(7), ts::expected_schema(8));
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 8);
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

// One linear sequence 1 -> 2 -> 3 -> 4 (tags, rank_topology, link_probes): a file of every older
// version opens unchanged (read-only and read-write alike), reads its trial, and is migrated to the
// current version by its first change, ending with a new file's schema.
TEST(Schema, EveryOlderVersionOpensUnchangedAndMigratesOnTheFirstChange) {
  for (int version = 1; version < ts::kSchemaVersion; ++version) {
    SCOPED_TRACE("schema version " + std::to_string(version));
    tt::TempDir dir;
    const auto path = dir.file("v" + std::to_string(version) + ".tbsession");
    const auto log = tt::log_of(tt::full_trial(2, 3));
    const int64_t id = make_version_file(path, version, log);
    const std::string before = tt::read_bytes(path);
    {
      auto ro = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
      EXPECT_EQ(ro.info().schema_version, version);
      EXPECT_EQ(tt::canonical(ro.load_trial(id).log), tt::canonical(log));
    }
    {
      auto store = ts::SessionStore::open(path);
      EXPECT_TRUE(store.needs_upgrade());
      EXPECT_EQ(tt::canonical(store.load_trial(id).log), tt::canonical(log));
      EXPECT_EQ(tt::read_bytes(path), before);
      store.rename_trial(id, "renamed");  // the first change migrates
      EXPECT_FALSE(store.needs_upgrade());
      EXPECT_EQ(store.info().schema_version, ts::kSchemaVersion);
      EXPECT_EQ(tt::canonical(store.load_trial(id).log), tt::canonical(log));
    }
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), ts::kSchemaVersion);
    EXPECT_EQ(ts::read_schema(db), ts::expected_schema(ts::kSchemaVersion));
  }
}

// The example sessions in sessions/ (written at schema 2 and 3) open read-only, unchanged, and
// every trial loads.
TEST(Schema, TheShippedSessionsOpenUnchanged) {
  int opened = 0;
  tt::TempDir dir;
  for (const char* name : {"cpu-tiny.tbsession", "h200-7b.tbsession"}) {
    // A copy, so no -wal or -shm appears beside the tree's file.
    const std::string shipped = std::string(TUNEBENCH_TEST_DATA_DIR) + "/../../sessions/" + name;
    SCOPED_TRACE(shipped);
    const std::string before = tt::read_bytes(shipped);
    ASSERT_FALSE(before.empty());
    const std::string path = dir.file(name);
    tt::write_bytes(path, before);
    auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_LE(store.info().schema_version, ts::kSchemaVersion);
    const auto trials = store.list_trials();
    EXPECT_FALSE(trials.empty());
    for (const auto& t : trials) EXPECT_NO_THROW(store.load_trial(t.id)) << t.name;
    EXPECT_EQ(tt::read_bytes(path), before);
    ++opened;
  }
  EXPECT_EQ(opened, 2);
}

// Schema 5 (plans, core/investigate): a version-4 file reads as having no plans and stays
// unchanged; the first plan written migrates it, and the plan reads back.
TEST(Schema, Version5PlansMigrateAVersion4FileOnFirstWrite) {
  tt::TempDir dir;
  const auto path = dir.file("v4.tbsession");
  make_version_file(path, 4, tt::log_of(tt::full_trial(1, 3)));
  const std::string before = tt::read_bytes(path);
  {
    auto store = ts::SessionStore::open(path);
    EXPECT_TRUE(ts::list_plans(store).empty());
    EXPECT_FALSE(ts::find_plan(store, 1).has_value());
  }
  EXPECT_EQ(tt::read_bytes(path), before);
  {
    auto ro = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_THROW(ts::add_plan(ro, "investigate", 1, nlohmann::json{{"x", 1}}), ts::StoreError);
  }
  auto store = ts::SessionStore::open(path);
  const int64_t id = ts::add_plan(store, "investigate", 1, nlohmann::json{{"variants", 3}});
  EXPECT_EQ(ts::find_plan(store, id)->state, ts::PlanState::Planned);
  ts::set_plan_state(store, id, ts::PlanState::Done);
  ts::set_plan_result(store, id, nlohmann::json{{"verdict", "ok"}});
  const auto plan = ts::find_plan(store, id);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, "investigate");
  EXPECT_EQ(plan->baseline_trial, 1);
  EXPECT_EQ(plan->state, ts::PlanState::Done);
  EXPECT_EQ(plan->spec["variants"], 3);
  EXPECT_EQ(plan->result["verdict"], "ok");
  EXPECT_EQ(store.info().schema_version, ts::kSchemaVersion);
  EXPECT_THROW(ts::set_plan_state(store, id + 1, ts::PlanState::Done), ts::StoreError);
  // A state no Tunebench writes is refused when read, as an unknown trial status is.
  store.database().exec("UPDATE plans SET state = 'cancelled' WHERE id = " + std::to_string(id));
  EXPECT_THROW(ts::find_plan(store, id), ts::StoreError);
}

// Version 6: kernel-sampled steps keep their flag and GPU busy; unsampled steps write nothing there.
TEST(Schema, KernelSampledStepsRoundTrip) {
  tt::TempDir dir;
  const auto path = dir.file("v6.tbsession");
  auto events = tt::full_trial(1, 3);
  for (auto& e : events)
    if (e.is<tunebench::protocol::Step>() && e.as<tunebench::protocol::Step>().step == 1) {
      auto& s = e.as<tunebench::protocol::Step>();
      s.gpu_sampled = true;
      s.gpu_busy_ms = 1.25;
    }
  const auto log = tt::log_of(events);
  const int64_t id = make_version_file(path, ts::kSchemaVersion, log);
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto loaded = store.load_trial(id).log;
  EXPECT_EQ(tt::canonical(loaded), tt::canonical(log));
  int sampled = 0;
  for (const auto& s : loaded.ranks.at(0).steps) {
    sampled += s.gpu_sampled;
    if (s.step == 1) {
      EXPECT_TRUE(s.gpu_sampled);
      EXPECT_DOUBLE_EQ(s.gpu_busy_ms, 1.25);
    }
  }
  EXPECT_EQ(sampled, 1);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM step_gpu").getInt(), 1);
}

// Version 8: a version-7 session (no memory timelines) opens read-only unchanged and loads its
// steps without a timeline; a trial run into it migrates it on its first write, and its memory
// timeline reads back beside the older trial's steps.
TEST(Schema, Version8MemoryTimelinesMigrateAVersion7FileOnFirstWrite) {
  namespace tp = tunebench::protocol;
  tt::TempDir dir;
  const auto path = dir.file("v7.tbsession");
  const auto old_log = tt::log_of(tt::full_trial(1, 3));
  const int64_t old_id = make_version_file(path, 7, old_log);
  const std::string before = tt::read_bytes(path);
  {
    auto ro = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(ro.info().schema_version, 7);
    const auto loaded = ro.load_trial(old_id).log;
    EXPECT_EQ(tt::canonical(loaded), tt::canonical(old_log));
    for (const auto& s : loaded.ranks.at(0).steps) EXPECT_TRUE(s.memory_timeline.empty());
  }
  EXPECT_EQ(tt::read_bytes(path), before);

  auto events = tt::full_trial(1, 3);
  const std::vector<tp::MemoryTimelinePoint> points = {
      {tp::Phase::Forward, tp::MemoryPoint::Start, 5, 100, 300},
      {tp::Phase::Forward, tp::MemoryPoint::Peak, std::nullopt, 250, 400},
      {tp::Phase::Forward, tp::MemoryPoint::End, 900, 200, 400}};
  for (auto& e : events)
    if (e.is<tp::Step>() && e.as<tp::Step>().step == 1) e.as<tp::Step>().memory_timeline = points;
  int64_t id = 0;
  {
    auto store = ts::SessionStore::open(path);
    EXPECT_TRUE(store.needs_upgrade());
    id = store.add_trial("with a timeline", nlohmann::json::object());  // the first change migrates
    EXPECT_EQ(store.info().schema_version, ts::kSchemaVersion);
  }
  {
    ts::TrialWriter w(path, id);
    for (const auto& e : events) w.add(e);
    w.finish(ts::TrialStatus::Done, "");
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(tt::canonical(store.load_trial(old_id).log), tt::canonical(old_log));
  const auto loaded = store.load_trial(id).log;
  EXPECT_EQ(tt::canonical(loaded), tt::canonical(tt::log_of(events)));
  EXPECT_EQ(loaded.ranks.at(0).steps.at(1).memory_timeline, points);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(ts::read_schema(db), ts::expected_schema(ts::kSchemaVersion));
}
