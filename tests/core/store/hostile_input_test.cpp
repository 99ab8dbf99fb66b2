// Logs and session files a worker never writes: two runs in one log, repeated steps, numbers that
// used to wrap, millions of bad lines, invalid UTF-8 and crafted times in a session, an older
// file opened for writing, a file another program holds locked. Each gives a clear result, never
// a merged trial, a wrapped number, a raw library message or a rewritten file.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/protocol/event_writer.h"
#include "core/store/event_log_import.h"
#include "core/store/export.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace tp = tunebench::protocol;

namespace {

std::string lines_of(const std::vector<tp::Event>& events) {
  std::string text;
  for (const auto& e : events) text += tp::format_line(e);
  return text;
}

// A closed session with one finished 2-rank trial.
struct Session {
  tt::TempDir dir;
  std::string path = dir.file("s.tbsession");
  int64_t trial = 0;
  Session() {
    trial = ts::SessionStore::create(path, "s").add_trial("t", {{"strategy", "ddp"}});
    ts::TrialWriter w(path, trial);
    for (const auto& e : tt::full_trial(2, 3)) w.add(e);
    w.finish(ts::TrialStatus::Done);
  }
};

std::string load_error(const std::string& path, int64_t trial) {
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  try {
    store.load_trial(trial);
  } catch (const ts::StoreError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(HostileImport, TwoTrialIdsInOneLogBecomeTwoTrials) {
  tt::TempDir dir;
  std::vector<tp::Event> events;
  for (int s = 0; s < 4; ++s) {  // interleaved: two runs appending to one file
    events.push_back(tt::step_event(0, s, "run-a"));
    events.push_back(tt::step_event(0, s, "run-b"));
  }
  tt::write_bytes(dir.file("two.jsonl"), lines_of(events));
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, dir.file("two.jsonl"), "shared log");
  ASSERT_EQ(result.trial_ids.size(), 2u);
  EXPECT_EQ(result.trial_id, result.trial_ids[0]);
  const auto a = store.load_trial(result.trial_ids[0]);
  const auto b = store.load_trial(result.trial_ids[1]);
  EXPECT_EQ(a.info.run_id, "run-a");
  EXPECT_EQ(b.info.run_id, "run-b");
  EXPECT_EQ(a.info.name, "shared log [run-a]");
  EXPECT_EQ(a.log.ranks.at(0).steps.size(), 4u);  // not 8 merged steps
  EXPECT_EQ(b.log.ranks.at(0).steps.size(), 4u);
}

TEST(HostileImport, DuplicateStepsAreReportedAndStoredOnce) {
  tt::TempDir dir;
  std::vector<tp::Event> events = {tt::step_event(0, 0), tt::step_event(0, 1), tt::step_event(0, 1),
                                   tt::step_event(0, 2)};
  tt::write_bytes(dir.file("dup.jsonl"), lines_of(events));
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, dir.file("dup.jsonl"));
  EXPECT_EQ(result.problems, 1);
  ASSERT_EQ(result.problem_list.size(), 1u);
  EXPECT_EQ(result.problem_list[0].kind, tp::ReadProblem::Kind::DuplicateStep);
  const auto t = store.load_trial(result.trial_id);
  EXPECT_EQ(t.log.ranks.at(0).steps.size(), 3u);
  EXPECT_EQ(t.log.problem_count, 1);
}

TEST(HostileImport, OutOfRangeNumbersAreSkippedAndCounted) {
  tt::TempDir dir;
  std::string text = lines_of({tt::step_event(0, 0)});
  text += R"({"v":1,"type":"step","trial":"run-1","rank":4294967296,"step":1})"
          "\n";
  text += R"({"v":1,"type":"step","trial":"run-1","rank":0,"step":18446744073709551615})"
          "\n";
  text += R"({"v":1,"type":"step","trial":"run-1","rank":0,"step":1e30})"
          "\n";
  tt::write_bytes(dir.file("wrap.jsonl"), text);
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, dir.file("wrap.jsonl"));
  EXPECT_EQ(result.problems, 3);
  const auto t = store.load_trial(result.trial_id);
  ASSERT_EQ(t.log.ranks.size(), 1u);
  ASSERT_EQ(t.log.ranks.at(0).steps.size(), 1u);
  EXPECT_EQ(t.log.ranks.at(0).steps[0].step, 0);
}

TEST(HostileImport, MillionsOfBadLinesKeepTheFirstAndACount) {
  tt::TempDir dir;
  std::string text = lines_of({tt::step_event(0, 0)});
  for (int i = 0; i < 20000; ++i) text += "NCCL INFO line " + std::to_string(i) + "\n";
  tt::write_bytes(dir.file("noisy.jsonl"), text);
  const auto session = dir.file("s.tbsession");
  auto store = ts::SessionStore::create(session, "s");
  const auto result = ts::import_event_log(store, dir.file("noisy.jsonl"));
  EXPECT_EQ(result.problems, 20000);
  const auto t = store.load_trial(result.trial_id);
  EXPECT_EQ(t.log.problem_count, 20000);  // the count survives the store
  EXPECT_EQ(t.log.problems.size(), tp::TrialLog::kMaxKeptProblems);
  SQLite::Database raw(session, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM read_problems").getInt(),
            static_cast<int>(tp::TrialLog::kMaxKeptProblems) + 1);  // the kept ones and one count
}

TEST(HostileImport, NewerVersionNoticeIsNotCountedAsUnreadable) {
  tt::TempDir dir;
  tt::write_bytes(dir.file("v2.jsonl"), R"({"v":2,"type":"step","trial":"x","rank":0,"step":0,"future":true})"
                                        "\n");
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, dir.file("v2.jsonl"));
  EXPECT_EQ(result.problems, 0);
  EXPECT_EQ(store.load_trial(result.trial_id).log.ranks.at(0).steps.size(), 1u);
}

TEST(HostileImport, LiveWriterStoresDuplicateStepsOnceAndCapsProblems) {
  tt::TempDir dir;
  const auto path = dir.file("live.tbsession");
  const int64_t id = ts::SessionStore::create(path, "live").add_trial("t", nlohmann::json::object());
  {
    ts::TrialWriter w(path, id);
    w.add(tt::step_event(0, 0));
    w.add(tt::step_event(0, 0));
    for (int i = 0; i < 3000; ++i) w.add_problem({tp::ReadProblem::Kind::BadJson, i + 1, "not JSON", "x"});
    w.finish(ts::TrialStatus::Done);
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto log = store.load_trial(id).log;
  EXPECT_EQ(log.ranks.at(0).steps.size(), 1u);
  EXPECT_EQ(log.problem_count, 3001);  // 3000 bad lines and one duplicate step
  EXPECT_EQ(log.problems.size(), tp::TrialLog::kMaxKeptProblems);
}

TEST(HostileSession, InvalidUtf8IsReplacedSoExportsWork) {
  Session s;
  tt::raw_exec(s.path,
               "UPDATE trials SET name = CAST(X'41FF42' AS TEXT);"
               "UPDATE rank_env SET host = CAST(X'C0AF68' AS TEXT), device = CAST(X'E282' AS TEXT)");
  auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  const auto trial = store.load_trial(s.trial);
  EXPECT_EQ(trial.info.name,
            "A\xEF\xBF\xBD"
            "B");
  EXPECT_EQ(trial.log.ranks.at(0).hello->host, "\xEF\xBF\xBD\xEF\xBF\xBDh");
  // dump() without an error handler throws on invalid UTF-8: nothing invalid is left to throw on.
  EXPECT_NO_THROW(ts::trials_to_json({trial}, {}).dump());
  EXPECT_NO_THROW(ts::chrome_trace(trial).dump());
}

TEST(HostileSession, CraftedNumbersFailTheLoadNotTheArithmetic) {
  {
    Session s;  // end_us - start_us would overflow in the Chrome trace
    tt::raw_exec(s.path,
                 "UPDATE intervals SET start_us = -9223372036854775808, end_us = 9223372036854775807 WHERE idx = 0");
    EXPECT_NE(load_error(s.path, s.trial).find("start_us"), std::string::npos) << load_error(s.path, s.trial);
  }
  {
    Session s;  // a world size no hello can mean
    tt::raw_exec(s.path, "UPDATE rank_env SET world_size = 7300000000000");
    EXPECT_NE(load_error(s.path, s.trial).find("world_size"), std::string::npos) << load_error(s.path, s.trial);
  }
  {
    Session s;
    tt::raw_exec(s.path, "UPDATE steps SET step_ms = 1e308 * 10");  // +inf
    EXPECT_NE(load_error(s.path, s.trial).find("step_ms"), std::string::npos) << load_error(s.path, s.trial);
  }
}

// A memory timeline no worker writes: a phase it does not read, negative bytes, an offset before
// the step, a point that is not start, peak or end, more points than a step may have.
TEST(HostileSession, CraftedMemoryTimelinesFailTheLoad) {
  auto session_with_timeline = [](Session& s) {
    auto events = tt::full_trial(1, 2);
    for (auto& e : events)
      if (e.is<tp::Step>())
        e.as<tp::Step>().memory_timeline = {{tp::Phase::Forward, tp::MemoryPoint::Start, 10, 100, 200},
                                            {tp::Phase::Forward, tp::MemoryPoint::Peak, std::nullopt, 150, 200}};
    const int64_t id = ts::SessionStore::open(s.path).add_trial("timeline", {{"strategy", "single"}});
    ts::TrialWriter w(s.path, id);
    for (const auto& e : events) w.add(e);
    w.finish(ts::TrialStatus::Done);
    return id;
  };
  const std::pair<const char*, const char*> crafted[] = {
      {"UPDATE step_memory_timeline SET phase = 'data_wait' WHERE idx = 0", "memory timeline with a phase"},
      {"UPDATE step_memory_timeline SET phase = 'sideways' WHERE idx = 0", "unknown phase"},
      {"UPDATE step_memory_timeline SET point = 'middle' WHERE idx = 1", "memory timeline with an unknown point"},
      {"UPDATE step_memory_timeline SET allocated_bytes = -1 WHERE idx = 1", "allocated_bytes"},
      {"UPDATE step_memory_timeline SET offset_us = -5 WHERE idx = 0", "offset_us"},
  };
  for (const auto& [sql, expected] : crafted) {
    SCOPED_TRACE(sql);
    Session s;
    const int64_t id = session_with_timeline(s);
    EXPECT_EQ(load_error(s.path, id), "");
    tt::raw_exec(s.path, sql);
    const std::string error = load_error(s.path, id);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
  {
    Session s;  // 70 points on one step: more than kMaxMemoryTimelinePoints
    const int64_t id = session_with_timeline(s);
    std::string sql;
    for (int i = 2; i < 70; ++i)
      sql += "INSERT INTO step_memory_timeline SELECT step_id, " + std::to_string(i) +
             ", phase, point, offset_us, allocated_bytes, reserved_bytes FROM step_memory_timeline WHERE idx = 0;";
    tt::raw_exec(s.path, sql);
    EXPECT_NE(load_error(s.path, id).find("memory timeline longer than"), std::string::npos) << load_error(s.path, id);
  }
}

TEST(HostileSession, ReadingAnOlderFileForWritingDoesNotChangeIt) {
  Session s;
  // Make it a schema-2 file in rollback-journal mode, as an older build leaves it.
  tt::raw_exec(s.path, "PRAGMA journal_mode = DELETE; DROP TABLE step_gpu; DROP TABLE plans; DROP TABLE link_probes; DROP TABLE rank_topology; DROP TABLE step_memory; DROP TABLE gpu_counters; DROP TABLE step_memory_timeline; PRAGMA user_version = 2");
  const std::string before = tt::read_bytes(s.path);
  {
    auto store = ts::SessionStore::open(s.path);
    EXPECT_TRUE(store.needs_upgrade());
    EXPECT_EQ(store.list_trials().size(), 1u);
    EXPECT_EQ(store.load_trial(s.trial).log.ranks.size(), 2u);
    EXPECT_EQ(store.mark_orphaned_trials_interrupted() >= 0, true);
  }
  // mark_orphaned_trials_interrupted() is a change: only now is it migrated.
  EXPECT_NE(tt::read_bytes(s.path), before);
  tt::raw_exec(s.path, "PRAGMA journal_mode = DELETE; DROP TABLE step_gpu; DROP TABLE plans; DROP TABLE link_probes; DROP TABLE rank_topology; DROP TABLE step_memory; DROP TABLE gpu_counters; DROP TABLE step_memory_timeline; PRAGMA user_version = 2");
  const std::string again = tt::read_bytes(s.path);
  {
    auto store = ts::SessionStore::open(s.path);
    store.trial_summaries(s.trial);
    store.trial_steps(s.trial);
  }
  EXPECT_EQ(tt::read_bytes(s.path), again);
  SQLite::Database raw(s.path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 2);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "delete");
}

TEST(HostileSession, ALockedFileIsReportedAsLockedNotDamaged) {
  Session s;
  SQLite::Database holder(s.path, SQLite::OPEN_READWRITE);
  holder.exec("PRAGMA locking_mode = EXCLUSIVE");
  holder.exec("BEGIN EXCLUSIVE");
  ts::SessionStore::OpenOptions options;
  options.mode = ts::SessionStore::Mode::ReadOnly;
  options.busy_timeout = std::chrono::milliseconds(50);
  try {
    ts::SessionStore::open(s.path, options);
    ADD_FAILURE() << "opened a file another connection holds exclusively";
  } catch (const ts::StoreError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("locked"), std::string::npos) << what;
    EXPECT_EQ(what.find("damaged"), std::string::npos) << what;
  }
  holder.exec("COMMIT");
}

TEST(HostileSession, ALiveWriterMigratingTheFileDoesNotBreakTheOpenStore) {
  // The GUI holds an older file open (unchanged); running a trial migrates it through the
  // TrialWriter's own connection; the GUI's next change must still work and see the new tables.
  Session s;
  tt::raw_exec(s.path, "PRAGMA journal_mode = DELETE; DROP TABLE step_gpu; DROP TABLE plans; DROP TABLE link_probes; DROP TABLE rank_topology; DROP TABLE step_memory; DROP TABLE gpu_counters; DROP TABLE step_memory_timeline; PRAGMA user_version = 2");
  auto gui = ts::SessionStore::open(s.path);
  ASSERT_TRUE(gui.needs_upgrade());
  const int64_t next = gui.add_trial("next", nlohmann::json::object());  // the first change migrates
  EXPECT_FALSE(gui.needs_upgrade());
  {
    ts::TrialWriter w(s.path, next);
    w.add(tt::step_event(0, 0));
    w.finish(ts::TrialStatus::Done);
  }
  gui.set_trial_tags(next, {"after"});
  EXPECT_EQ(gui.trial(next).tags, std::vector<std::string>{"after"});

  // The other order: the writer migrates first, the GUI's store changes afterwards.
  Session t;
  tt::raw_exec(t.path, "PRAGMA journal_mode = DELETE; DROP TABLE step_gpu; DROP TABLE plans; DROP TABLE link_probes; DROP TABLE rank_topology; DROP TABLE step_memory; DROP TABLE gpu_counters; DROP TABLE step_memory_timeline; PRAGMA user_version = 2");
  auto gui2 = ts::SessionStore::open(t.path);
  {
    ts::TrialWriter w(t.path, t.trial);
    w.finish(ts::TrialStatus::Done);
  }
  EXPECT_FALSE(gui2.needs_upgrade());
  gui2.set_trial_tags(t.trial, {"tagged"});  // used to fail: "changed while it was open"
  EXPECT_EQ(gui2.trial(t.trial).tags, std::vector<std::string>{"tagged"});
}
