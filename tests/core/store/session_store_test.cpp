// SessionStore: creating and reopening sessions, the round trip of every record type, and the
// trial operations the GUI offers (list, rename, delete, duplicate, annotate).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "core/store/schema.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace tp = tunebench::protocol;

namespace {

// Writes `events` through a TrialWriter into a new trial and returns its id.
int64_t write_trial(const std::string& path, const std::vector<tp::Event>& events,
                    const std::string& name = "ddp 2x") {
  int64_t id = 0;
  {
    auto store = ts::SessionStore::open(path);
    id = store.add_trial(name, {{"strategy", "ddp"}});
  }
  ts::TrialWriter::Options o;
  o.max_batch_events = 7;  // several batches, and one left for finish()
  ts::TrialWriter writer(path, id, o);
  for (const auto& e : events) writer.add(e);
  writer.finish(ts::TrialStatus::Done, "");
  return id;
}

}  // namespace

TEST(SessionStore, CreateThenReopen) {
  tt::TempDir dir;
  const auto path = dir.file("a.tbsession");
  {
    auto store = ts::SessionStore::create(path, "H200 sweep");
    store.set_notes("two H200s, NVLink");
  }
  auto store = ts::SessionStore::open(path);
  const auto info = store.info();
  EXPECT_EQ(info.name, "H200 sweep");
  EXPECT_EQ(info.notes, "two H200s, NVLink");
  EXPECT_GT(info.created_us, 0);
  EXPECT_EQ(info.schema_version, ts::kSchemaVersion);
  EXPECT_TRUE(store.list_trials().empty());
}

TEST(SessionStore, CreateRefusesAnExistingFile) {
  tt::TempDir dir;
  const auto path = dir.file("exists.tbsession");
  tt::write_bytes(path, "precious");
  EXPECT_THROW(ts::SessionStore::create(path, "x"), ts::StoreError);
  EXPECT_EQ(tt::read_bytes(path), "precious");
}

TEST(SessionStore, RoundTripOfEveryRecordType) {
  tt::TempDir dir;
  const auto path = dir.file("rt.tbsession");
  ts::SessionStore::create(path, "rt");
  const auto events = tt::full_trial(2, 9);
  tp::TrialLog expected = tt::log_of(events);
  tp::ReadProblem problem{tp::ReadProblem::Kind::BadJson, 12, "not JSON", "NCCL INFO Bootstrap"};
  expected.problems.push_back(problem);

  int64_t id = 0;
  {
    auto store = ts::SessionStore::open(path);
    id = store.add_trial("ddp 2x", {{"strategy", "ddp"}});
    ts::TrialWriter writer(path, id);
    for (const auto& e : events) writer.add(e);
    writer.add_problem(problem);
    writer.finish(ts::TrialStatus::Done);
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto loaded = store.load_trial(id);
  EXPECT_EQ(tt::canonical(loaded.log), tt::canonical(expected));
  // Spot checks, so a bug in canonical() cannot hide a loss.
  ASSERT_EQ(loaded.log.ranks.size(), 2u);
  const auto& r1 = loaded.log.ranks.at(1);
  ASSERT_TRUE(r1.hello && r1.model && r1.done);
  EXPECT_EQ(r1.hello->env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(r1.hello->config["bucket_mb"], 25.0);
  EXPECT_EQ(r1.steps.size(), 9u);
  EXPECT_EQ(r1.steps[5].intervals.size(), 6u);
  EXPECT_EQ(r1.steps[5].intervals[3].label, "bucket 1");
  EXPECT_EQ(r1.steps[5].intervals[3].bytes, 26'214'400);
  EXPECT_EQ(r1.errors.size(), 1u);
  EXPECT_EQ(r1.errors[0].value.details["requested_bytes"], 2147483648LL);
  EXPECT_FALSE(loaded.log.ranks.at(0).samples[1].value.util_pct.has_value());
  EXPECT_EQ(loaded.log.ranks.at(0).samples[0].value.util_pct, 97.5);
  EXPECT_EQ(loaded.log.trial, "run-1");
  EXPECT_EQ(loaded.info.run_id, "run-1");
  EXPECT_EQ(loaded.info.status, ts::TrialStatus::Done);
  EXPECT_EQ(loaded.info.step_count, 18);
  EXPECT_TRUE(loaded.info.start_us && loaded.info.end_us);

  // The cheap views agree with the full load.
  const auto env = store.trial_environment(id);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env.at(1).nccl, "2.28.3");
  EXPECT_EQ(env.at(1).env.at("NCCL_DEBUG"), "INFO");
  const auto summaries = store.trial_summaries(id);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries.at(0).summary.tokens_per_s, 43000.5);
  EXPECT_THROW(store.trial_environment(id + 1), ts::StoreError);
}

TEST(SessionStore, ListRenameDeleteDuplicateAnnotate) {
  tt::TempDir dir;
  const auto path = dir.file("ops.tbsession");
  ts::SessionStore::create(path, "ops");
  const int64_t a = write_trial(path, tt::full_trial(1, 4), "single");
  const int64_t b = write_trial(path, tt::full_trial(2, 4), "ddp");

  auto store = ts::SessionStore::open(path);
  auto trials = store.list_trials();
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].name, "single");
  EXPECT_EQ(trials[1].step_count, 8);

  store.rename_trial(a, "single GPU");
  store.set_trial_notes(a, "baseline");
  store.set_trial_tags(a, {"baseline", " h200 ", "baseline", ""});
  const auto ta = store.trial(a);
  EXPECT_EQ(ta.name, "single GPU");
  EXPECT_EQ(ta.notes, "baseline");
  EXPECT_EQ(ta.tags, (std::vector<std::string>{"baseline", "h200"}));

  const int64_t c = store.duplicate_trial(b, "ddp, bucket 50");
  const auto tc = store.trial(c);
  EXPECT_EQ(tc.status, ts::TrialStatus::Queued);
  EXPECT_EQ(tc.config, store.trial(b).config);
  EXPECT_EQ(tc.step_count, 0);
  EXPECT_EQ(tc.source, "duplicate of trial " + std::to_string(b));

  store.delete_trial(b);
  trials = store.list_trials();
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].id, a);
  EXPECT_EQ(trials[1].id, c);
  EXPECT_THROW(store.trial(b), ts::StoreError);
  EXPECT_THROW(store.load_trial(b), ts::StoreError);
  EXPECT_THROW(store.rename_trial(b, "gone"), ts::StoreError);
  // The deleted trial's records went with it.
  EXPECT_EQ(store.load_trial(a).log.ranks.size(), 1u);
}

TEST(SessionStore, SqlInNamesIsJustText) {
  tt::TempDir dir;
  const auto path = dir.file("sql.tbsession");
  auto store = ts::SessionStore::create(path, "x'; DROP TABLE trials; --");
  const std::string evil = "a'); DELETE FROM trials; SELECT ('";
  const int64_t id = store.add_trial(evil, nlohmann::json::object());
  store.set_trial_tags(id, {"'; DROP TABLE trial_tags; --"});
  EXPECT_EQ(store.trial(id).name, evil);
  EXPECT_EQ(store.info().name, "x'; DROP TABLE trials; --");
  EXPECT_EQ(store.list_trials().size(), 1u);
  EXPECT_EQ(store.trial(id).tags.at(0), "'; DROP TABLE trial_tags; --");
}

TEST(SessionStore, NamesAreBoundedAndOneLine) {
  tt::TempDir dir;
  auto store = ts::SessionStore::create(dir.file("b.tbsession"), "b");
  const int64_t id = store.add_trial(std::string(10000, 'n') + "\n", nlohmann::json::object());
  const auto name = store.trial(id).name;
  EXPECT_EQ(name.size(), 256u);
  store.rename_trial(id, "line one\nline two");
  EXPECT_EQ(store.trial(id).name, "line one line two");
  // UTF-8 is never cut inside a character.
  std::string euros;
  for (int i = 0; i < 200; ++i) euros += "\xe2\x82\xac";
  store.rename_trial(id, euros);
  EXPECT_EQ(store.trial(id).name.size(), 255u);
}

TEST(SessionStore, ReadOnlyRefusesEdits) {
  tt::TempDir dir;
  const auto path = dir.file("ro.tbsession");
  int64_t id = ts::SessionStore::create(path, "ro").add_trial("t", nlohmann::json::object());
  const std::string before = tt::read_bytes(path);
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_TRUE(store.read_only());
  EXPECT_THROW(store.rename_trial(id, "x"), ts::StoreError);
  EXPECT_THROW(store.add_trial("x", nlohmann::json::object()), ts::StoreError);
  EXPECT_EQ(store.trial(id).name, "t");
  EXPECT_EQ(tt::read_bytes(path), before);
}

TEST(SessionStore, SaveAsWritesAnEqualSelfContainedFile) {
  tt::TempDir dir;
  const auto path = dir.file("live.tbsession");
  ts::SessionStore::create(path, "live");
  const int64_t id = write_trial(path, tt::full_trial(2, 3));
  auto store = ts::SessionStore::open(path);  // still open: the copy comes from a live session
  store.set_trial_tags(id, {"shared"});
  const auto copy_path = dir.file("copy.tbsession");
  store.save_as(copy_path);
  EXPECT_THROW(store.save_as(copy_path), ts::StoreError);
  auto copy = ts::SessionStore::open(copy_path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(copy.info().name, "live");
  EXPECT_EQ(copy.trial(id).tags, std::vector<std::string>{"shared"});
  EXPECT_EQ(tt::canonical(copy.load_trial(id).log), tt::canonical(store.load_trial(id).log));
}

TEST(SessionStore, WriteProtectedFileOpensReadOnlyOnly) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  tt::TempDir dir;
  const auto path = dir.file("wp.tbsession");
  ts::SessionStore::create(path, "wp").add_trial("t", nlohmann::json::object());
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  try {
    ts::SessionStore::open(path);
    ADD_FAILURE() << "opened a write-protected file for writing";
  } catch (const ts::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("write-protected"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly}).list_trials().size(), 1u);
}
