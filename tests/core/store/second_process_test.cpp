// A session this process writes while another process writes it too (issue 43). SQLite keeps two
// processes' writes apart with POSIX advisory locks, and POSIX drops *every* lock a process holds
// on a file when *any* descriptor of that file is closed. A header check, a report sniff or a copy
// that opens and closes the session with a descriptor of its own therefore strips our connections'
// locks; the other process, closing last, then checkpoints and deletes the -wal and -shm under our
// live connections, and everything we write afterwards is lost. The second process here is the
// real `sqlite3` program (a product process, tunebench-cli, is in tests/ui/windows).
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <functional>

#include "core/report/embedded_session.h"
#include "core/store/file_guard.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

namespace {

// Runs the sqlite3 program on `path` and waits for it: a second process that writes and closes.
int run_sqlite3(const std::string& path, const std::string& sql) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("sqlite3", "sqlite3", "-bail", path.c_str(), sql.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string integrity(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet("PRAGMA integrity_check").getString();
}

// A live writer with a few committed steps, then `touch` (what this process does to the file while
// it writes), then another process's write and close, then more steps: every step of both must be
// in the file, the -wal we write must still be the one on disk, and the file must be intact.
void expect_survives(const std::function<void(const std::string&)>& touch) {
  tt::TempDir dir;
  const std::string path = dir.file("s.tbsession");
  const int64_t id = ts::SessionStore::create(path, "s").add_trial("live", {{"strategy", "single"}});
  ts::TrialWriter writer(path, id);
  const auto events = tt::full_trial(1, 12);
  size_t i = 0;
  for (; i < events.size() / 2; ++i) writer.add(events[i]);
  writer.flush();
  const ino_t wal = inode_of(path + "-wal");
  ASSERT_NE(wal, 0u) << "a live writer keeps a write-ahead log";

  touch(path);
  ASSERT_EQ(run_sqlite3(path, "UPDATE session SET notes = 'from another process';"), 0);

  EXPECT_EQ(inode_of(path + "-wal"), wal) << "the other process deleted the -wal this process writes";
  for (; i < events.size(); ++i) writer.add(events[i]);
  writer.finish(ts::TrialStatus::Done);

  const auto reader = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  EXPECT_EQ(reader.info().notes, "from another process");
  EXPECT_EQ(reader.trial(id).status, ts::TrialStatus::Done);
  EXPECT_EQ(tt::canonical(reader.load_trial(id).log), tt::canonical(tt::log_of(events)));
  EXPECT_EQ(integrity(path), "ok");
}

}  // namespace

TEST(SecondProcess, OpeningTheSessionAgainKeepsTheWritersLocks) {
  // What the window does all the time: a job opens its own connection (header check first).
  expect_survives([](const std::string& path) {
    const auto again = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(again.list_trials().size(), 1u);
  });
}

TEST(SecondProcess, ReadingTheHeaderKeepsTheWritersLocks) {
  expect_survives([](const std::string& path) { EXPECT_EQ(ts::check_file_header(path, 1 << 30).user_version > 0, true); });
}

TEST(SecondProcess, AskingWhetherTheSessionIsAReportKeepsTheWritersLocks) {
  // A file dropped on the window is sniffed by every importer, the open session included.
  expect_survives([](const std::string& path) { EXPECT_FALSE(tunebench::report::is_report_file(path)); });
}

TEST(SecondProcess, ReadFilePrefixReadsWhatAPlainReadReads) {
  tt::TempDir dir;
  const std::string path = dir.file("bytes.bin");
  tt::write_bytes(path, std::string("SQLite format 3\0rest of it", 26));
  EXPECT_EQ(ts::read_file_prefix(path, 16), std::string("SQLite format 3\0", 16));
  EXPECT_EQ(ts::read_file_prefix(path, 100), std::string("SQLite format 3\0rest of it", 26));
  EXPECT_EQ(ts::read_file_prefix(path, 0), "");
  EXPECT_THROW(ts::read_file_prefix(dir.file("missing"), 16), ts::StoreError);
}
