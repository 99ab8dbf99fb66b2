// Opening files from someone else: text, empty, foreign SQLite, newer, truncated, corrupt and
// hostile sessions are refused with a clear StoreError, and the file is left byte for byte as it
// was. Hostile values inside an otherwise valid session fail the load, never the process.
#include <gtest/gtest.h>

#include <optional>

#include <sqlite3.h>

#include "core/store/connection.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

namespace {

// A closed, valid session with one finished trial: the starting point of every hostile file.
struct GoodSession {
  tt::TempDir dir;
  std::string path = dir.file("good.tbsession");
  int64_t trial = 0;
  GoodSession() {
    trial = ts::SessionStore::create(path, "good").add_trial("t", {{"strategy", "single"}});
    ts::TrialWriter w(path, trial);
    for (const auto& e : tt::full_trial(1, 5)) w.add(e);
    w.finish(ts::TrialStatus::Done);
  }
};

// SQLite's own words, which mean nothing to a user (issue 43: "btreeInitPage() returns error code
// 11", "disk I/O error", "*** in database main *** Page 13: ...").
void expect_plain_words(const std::string& message) {
  for (const char* raw : {"***", "error code", "btree", "malformed", "disk I/O error", "file is not a database",
                          "SQLITE_", "Page "})
    EXPECT_EQ(message.find(raw), std::string::npos) << "raw SQLite text '" << raw << "' in: " << message;
}

// Opening (both modes) fails with a message containing `expect`, and the file is unchanged.
void expect_refused(const std::string& path, const std::string& expect) {
  const std::string before = tt::read_bytes(path);
  for (auto mode : {ts::SessionStore::Mode::ReadOnly, ts::SessionStore::Mode::ReadWrite}) {
    try {
      ts::SessionStore::open(path, {mode});
      ADD_FAILURE() << "opened " << path << " but expected: " << expect;
    } catch (const ts::StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      expect_plain_words(e.what());
    }
    EXPECT_EQ(tt::read_bytes(path), before) << "the refused file was changed";
  }
}

// Scribbles over every page after the second of `s`, opens it without the full check (as the
// window's own connections do) and loads its trial: the error that load raises, or none.
std::optional<ts::StoreError> load_from_scribbled_pages(const GoodSession& s) {
  std::string bytes = tt::read_bytes(s.path);
  for (size_t i = 2 * 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) & 0xff);
  tt::write_bytes(s.path, bytes);
  ts::SessionStore::OpenOptions options;
  options.mode = ts::SessionStore::Mode::ReadOnly;
  options.check_integrity = false;
  try {
    const auto store = ts::SessionStore::open(s.path, options);
    store.load_trial(s.trial);
  } catch (const ts::StoreError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST(FileGuard, MissingEmptyAndTextFiles) {
  tt::TempDir dir;
  EXPECT_THROW(ts::SessionStore::open(dir.file("nope.tbsession")), ts::StoreError);
  tt::write_bytes(dir.file("empty.tbsession"), "");
  expect_refused(dir.file("empty.tbsession"), "is empty");
  tt::write_bytes(dir.file("text.tbsession"), "{\"v\":1,\"type\":\"hello\"}\nhello world\n");
  expect_refused(dir.file("text.tbsession"), "not an SQLite database");
  tt::write_bytes(dir.file("short.tbsession"), std::string("SQLite format 3\0abc", 19));
  expect_refused(dir.file("short.tbsession"), "truncated");
}

TEST(FileGuard, ForeignSqliteDatabase) {
  tt::TempDir dir;
  const auto path = dir.file("firefox.sqlite");
  tt::raw_exec(path, "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);"
                     "INSERT INTO moz_places (url) VALUES ('https://example.org')");
  expect_refused(path, "another program");
}

TEST(FileGuard, NewerSchemaVersion) {
  GoodSession s;
  tt::raw_exec(s.path, "PRAGMA user_version = 99");
  expect_refused(s.path, "newer Tunebench");
}

TEST(FileGuard, TruncatedFile) {
  GoodSession s;
  const std::string bytes = tt::read_bytes(s.path);
  ASSERT_GT(bytes.size(), 8192u);
  tt::write_bytes(s.path, bytes.substr(0, bytes.size() / 2 / 4096 * 4096));  // at a page boundary
  expect_refused(s.path, "truncated");
  tt::write_bytes(s.path, bytes.substr(0, bytes.size() - 1000));  // inside a page
  expect_refused(s.path, "truncated");
}

TEST(FileGuard, CorruptPages) {
  GoodSession s;
  std::string bytes = tt::read_bytes(s.path);
  ASSERT_GT(bytes.size(), 3 * 4096u);
  // Scribble over everything after the first page: b-tree pages become garbage.
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) & 0xff);
  tt::write_bytes(s.path, bytes);
  expect_refused(s.path, "damaged");
}

TEST(FileGuard, DamageFoundAfterOpeningIsSaidInPlainWords) {
  // Opened without the full check (the window's own connections), the damage shows when a trial
  // is read: the sentence says the file is damaged, not what SQLite's b-tree code returned.
  GoodSession s;
  if (const auto e = load_from_scribbled_pages(s)) {
    EXPECT_NE(std::string(e->what()).find("damaged"), std::string::npos) << e->what();
    expect_plain_words(e->what());
  } else {
    ADD_FAILURE() << "loaded a trial from scribbled pages";
  }
  EXPECT_EQ(ts::describe_sqlite_error(SQLITE_CORRUPT), "the file is damaged (its pages do not read back as a database)");
  EXPECT_EQ(ts::describe_sqlite_error(SQLITE_IOERR_SHORT_READ).find("reading or writing the file failed"), 0u);
  EXPECT_EQ(ts::describe_sqlite_error(SQLITE_FULL), "the disk is full");
}

TEST(FileGuard, PlantedTriggerViewAndTable) {
  {
    GoodSession s;
    tt::raw_exec(s.path, "CREATE TRIGGER wipe AFTER INSERT ON trials BEGIN DELETE FROM steps; END");
    expect_refused(s.path, "trigger 'wipe'");
  }
  {
    GoodSession s;
    tt::raw_exec(s.path, "CREATE VIEW trial_names AS SELECT name FROM trials");
    expect_refused(s.path, "view 'trial_names'");
  }
  {
    GoodSession s;
    tt::raw_exec(s.path, "CREATE TABLE payload (x TEXT)");
    expect_refused(s.path, "table 'payload'");
  }
  {
    GoodSession s;  // one of our tables redefined (same name, different columns)
    tt::raw_exec(s.path, "DROP TABLE read_problems; CREATE TABLE read_problems (x)");
    expect_refused(s.path, "read_problems");
  }
}

TEST(FileGuard, WrongTypesFailTheLoadNotTheProcess) {
  GoodSession s;
  tt::raw_exec(s.path, "UPDATE steps SET step_ms = 'fast' WHERE step = 2");
  const std::string before = tt::read_bytes(s.path);
  {
    auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(store.list_trials().size(), 1u);  // metadata is fine
    try {
      store.load_trial(s.trial);
      ADD_FAILURE() << "loaded a step whose step_ms is text";
    } catch (const ts::StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("step_ms"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(tt::read_bytes(s.path), before);
  tt::raw_exec(s.path, "UPDATE trials SET config = X'00FF'");  // a blob where JSON belongs
  auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_THROW(store.list_trials(), ts::StoreError);
}

TEST(FileGuard, HostileJsonAndStatus) {
  GoodSession s;
  tt::raw_exec(s.path, "UPDATE trials SET config = '" + std::string(100000, '[') + "'");
  auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_THROW(store.trial(s.trial), ts::StoreError);
  tt::raw_exec(s.path, "UPDATE trials SET config = '{}', status = 'pwned'");
  auto again = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_THROW(again.trial(s.trial), ts::StoreError);
}

TEST(FileGuard, HugeStrings) {
  GoodSession s;
  // 1 MiB name: shown truncated to the name limit.
  tt::raw_exec(s.path, "UPDATE trials SET name = printf('%.*c', 1048576, 'x')");
  {
    auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(store.trial(s.trial).name.size(), 256u);
  }
  // 20 MiB message: over SQLite's per-value limit on our connections, so the read fails cleanly.
  tt::raw_exec(s.path, "UPDATE messages SET message = printf('%.*c', 20971520, 'y')");
  const std::string before = tt::read_bytes(s.path);
  auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_THROW(store.load_trial(s.trial), ts::StoreError);
  EXPECT_EQ(tt::read_bytes(s.path), before);
}

TEST(FileGuard, FileSizeCap) {
  GoodSession s;
  ts::SessionStore::OpenOptions o;
  o.max_file_bytes = 4096;
  const std::string before = tt::read_bytes(s.path);
  try {
    ts::SessionStore::open(s.path, o);
    ADD_FAILURE() << "opened a file over the size cap";
  } catch (const ts::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tt::read_bytes(s.path), before);
}

// Issue 44: a damaged session's message is a plain sentence that says what to do; SQLite's own
// words ("database disk image is malformed") are kept for the log or a Details section only.
TEST(FileGuard, DamageSaysWhatToDoAndKeepsSQLitesWordsForTheDetails) {
  GoodSession s;
  const auto e = load_from_scribbled_pages(s);
  ASSERT_TRUE(e) << "loaded a trial from scribbled pages";
  const std::string message = e->what();
  expect_plain_words(message);
  EXPECT_NE(message.find("is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("backup"), std::string::npos) << "says what to do: " << message;
  EXPECT_NE(e->details().find("SQLite"), std::string::npos) << "details: " << e->details();
  EXPECT_NE(e->details().find("malformed"), std::string::npos) << "details: " << e->details();
  // A code no sentence names is not passed through in SQLite's words either.
  expect_plain_words(ts::describe_sqlite_error(SQLITE_MISMATCH));
}
