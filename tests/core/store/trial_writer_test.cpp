// TrialWriter: batching, visibility to other connections, and the crash guarantee: a writer
// killed with SIGKILL leaves every committed batch intact and the trial marked interrupted.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <chrono>
#include <thread>

#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

namespace {

struct LiveSession {
  tt::TempDir dir;
  std::string path = dir.file("live.tbsession");
  int64_t trial = 0;
  LiveSession() { trial = ts::SessionStore::create(path, "live").add_trial("t", {{"steps", 1000}}); }
};

size_t stored_steps(const std::string& path, int64_t id) {
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto log = store.load_trial(id).log;
  auto it = log.ranks.find(0);
  return it == log.ranks.end() ? 0 : it->second.steps.size();
}

}  // namespace

TEST(TrialWriter, CommitsWhenTheBatchIsFull) {
  LiveSession s;
  ts::TrialWriter::Options o;
  o.max_batch_events = 10;
  o.background_flush = false;
  o.flush_interval = std::chrono::hours(1);
  ts::TrialWriter w(s.path, s.trial, o);
  for (int i = 0; i < 25; ++i) w.add(tt::step_event(0, i));
  EXPECT_EQ(w.committed(), 20);
  EXPECT_EQ(stored_steps(s.path, s.trial), 20u);  // another connection sees the batches
  w.flush();
  EXPECT_EQ(stored_steps(s.path, s.trial), 25u);
}

TEST(TrialWriter, BackgroundThreadCommitsAQuietTrial) {
  LiveSession s;
  ts::TrialWriter::Options o;
  o.flush_interval = std::chrono::milliseconds(50);
  o.max_batch_events = 1000000;
  ts::TrialWriter w(s.path, s.trial, o);
  w.add(tt::step_event(0, 0));
  // No timing assertion: only that the commit happens without another add() or flush().
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (w.committed() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(w.committed(), 1);
  EXPECT_EQ(stored_steps(s.path, s.trial), 1u);
  EXPECT_EQ(w.last_error(), "");
}

TEST(TrialWriter, RunningWhileTheWriterLivesThenFinalStatus) {
  LiveSession s;
  {
    ts::TrialWriter w(s.path, s.trial);
    w.add(tt::step_event(0, 0));
    w.flush();
    // The GUI opening the file meanwhile must not take a live trial for an interrupted one.
    auto gui = ts::SessionStore::open(s.path);
    EXPECT_EQ(gui.trial(s.trial).status, ts::TrialStatus::Running);
    w.finish(ts::TrialStatus::Failed, "rank 1: oom");
    EXPECT_THROW(w.add(tt::step_event(0, 1)), ts::StoreError);
  }
  auto store = ts::SessionStore::open(s.path);
  const auto t = store.trial(s.trial);
  EXPECT_EQ(t.status, ts::TrialStatus::Failed);
  EXPECT_EQ(t.exit_reason, "rank 1: oom");
  EXPECT_TRUE(t.end_us.has_value());
}

TEST(TrialWriter, ClosedWithoutFinishIsInterrupted) {
  LiveSession s;
  {
    ts::TrialWriter w(s.path, s.trial);
    w.add(tt::step_event(0, 0));
  }
  auto store = ts::SessionStore::open(s.path);
  EXPECT_EQ(store.trial(s.trial).status, ts::TrialStatus::Interrupted);
  EXPECT_EQ(stored_steps(s.path, s.trial), 1u);
}

TEST(TrialWriter, TwoThreadsAddingConcurrently) {
  LiveSession s;
  ts::TrialWriter::Options o;
  o.max_batch_events = 97;  // commits interleave with adds from both threads
  o.flush_interval = std::chrono::milliseconds(1);
  {
    ts::TrialWriter w(s.path, s.trial, o);
    auto produce = [&w](int rank) {
      for (int i = 0; i < 500; ++i) w.add(tt::step_event(rank, i));
    };
    std::thread a(produce, 0), b(produce, 1);
    a.join();
    b.join();
    w.finish(ts::TrialStatus::Done);
    EXPECT_EQ(w.committed(), 1000);
  }
  auto store = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
  const auto log = store.load_trial(s.trial).log;
  for (int rank : {0, 1}) {
    const auto& steps = log.ranks.at(rank).steps;
    ASSERT_EQ(steps.size(), 500u);
    for (int i = 0; i < 500; ++i) ASSERT_EQ(steps[i].step, i);  // per-rank order kept
  }
}

TEST(TrialWriter, MissingTrialIsAStoreError) {
  LiveSession s;
  EXPECT_THROW(ts::TrialWriter(s.path, s.trial + 100), ts::StoreError);
}

// The child writes steps as fast as it can (with a short sleep) and reports through a pipe how
// many it has committed. The parent kills it with SIGKILL after a few batches, then reopens.
TEST(TrialWriterCrash, SigkillKeepsEveryCommittedStepAndMarksInterrupted) {
  LiveSession s;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    try {
      ts::TrialWriter::Options o;
      o.flush_interval = std::chrono::milliseconds(100);
      o.max_batch_events = 1000000;  // only the clock triggers commits
      ts::TrialWriter w(s.path, s.trial, o);
      int64_t reported = -1;
      for (int64_t i = 0;; ++i) {
        w.add(tt::step_event(0, i));
        const int64_t c = w.committed();
        if (c != reported && write(fds[1], &c, sizeof c) != sizeof c) _exit(4);
        reported = c;
        usleep(500);
      }
    } catch (...) {
    }
    _exit(3);
  }
  close(fds[1]);
  int64_t committed = 0, c = 0;
  int batches = 0;
  // A hang guard, not a timing assertion: a writer that never commits must fail the test.
  pollfd pfd{fds[0], POLLIN, 0};
  while (poll(&pfd, 1, 60'000) == 1 && read(fds[0], &c, sizeof c) == sizeof c) {
    if (c > committed) ++batches;
    committed = c;
    if (batches >= 3) break;
  }
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  while (read(fds[0], &c, sizeof c) == sizeof c) committed = c;  // reports sent before the kill
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer child exited by itself: " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);
  ASSERT_GE(batches, 3);

  {  // Read-only: the committed batches are there and the trial shows as interrupted, but the
     // file is not written (the stored status is still running).
    auto viewer = ts::SessionStore::open(s.path, {ts::SessionStore::Mode::ReadOnly});
    EXPECT_EQ(viewer.trial(s.trial).status, ts::TrialStatus::Interrupted);
    EXPECT_GE(static_cast<int64_t>(viewer.load_trial(s.trial).log.ranks.at(0).steps.size()), committed);
    SQLite::Database raw(s.path, SQLite::OPEN_READONLY);
    SQLite::Statement q(raw, "SELECT status FROM trials WHERE id = ?");
    q.bind(1, s.trial);
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getString(), "running");
  }
  auto store = ts::SessionStore::open(s.path);
  const auto trial = store.trial(s.trial);
  EXPECT_EQ(trial.status, ts::TrialStatus::Interrupted);
  EXPECT_NE(trial.exit_reason.find(std::to_string(child)), std::string::npos) << trial.exit_reason;
  // Opening changes nothing; the first change of the session stores the new status.
  EXPECT_EQ(store.mark_orphaned_trials_interrupted(), 1);
  {
    SQLite::Statement q(store.database(), "SELECT status FROM trials WHERE id = ?");
    q.bind(1, s.trial);
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getString(), "interrupted");
  }
  const auto log = store.load_trial(s.trial).log;
  const auto& steps = log.ranks.at(0).steps;
  EXPECT_GE(static_cast<int64_t>(steps.size()), committed);
  for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i].step, static_cast<int64_t>(i));
  for (const auto& st : steps) ASSERT_EQ(st.intervals.size(), 6u);  // no half-written step
}
