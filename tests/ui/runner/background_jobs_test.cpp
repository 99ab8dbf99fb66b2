// BackgroundJobs: work runs off the GUI thread and its result is applied on it, progress arrives
// as a signal, a failing job is a signal (never an exception in the event loop), and a newer job
// of the same key supersedes an older one (clicking through trials loads only the last).
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include <QSignalSpy>

#include "ui/runner/background_jobs.h"

using namespace tunebench::ui;

TEST(BackgroundJobs, WorkRunsOffTheGuiThreadAndItsResultOnIt) {
  BackgroundJobs jobs;
  const auto gui = std::this_thread::get_id();
  std::thread::id worker, applied;
  QSignalSpy progress(&jobs, &BackgroundJobs::progress);
  QSignalSpy finished(&jobs, &BackgroundJobs::jobFinished);
  jobs.submit(QStringLiteral("work"), [&](JobProgress& p) {
    worker = std::this_thread::get_id();
    p.report(1, 2, QStringLiteral("half"));
    return [&] { applied = std::this_thread::get_id(); };
  });
  ASSERT_TRUE(jobs.waitForIdle(10000));
  EXPECT_NE(worker, gui);
  EXPECT_EQ(applied, gui);
  EXPECT_EQ(finished.size(), 1);
  ASSERT_GE(progress.size(), 1);
  EXPECT_EQ(progress.at(0).at(4).toString(), QStringLiteral("half"));
}

TEST(BackgroundJobs, AFailingJobIsASignal) {
  BackgroundJobs jobs;
  QSignalSpy failed(&jobs, &BackgroundJobs::jobFailed);
  const int id = jobs.submit(QStringLiteral("Opening doomed.tbsession"),
                             [](JobProgress&) -> BackgroundJobs::Apply { throw std::runtime_error("disk on fire"); },
                             {}, {JobKind::OpenSession, QStringLiteral("doomed.tbsession")});
  ASSERT_TRUE(jobs.waitForIdle(10000));
  ASSERT_EQ(failed.size(), 1);
  const auto failure = failed.at(0).at(0).value<JobFailure>();
  EXPECT_EQ(failure.id, id);
  EXPECT_EQ(failure.kind, JobKind::OpenSession);  // told apart by kind, not by parsing the title
  EXPECT_EQ(failure.subject, QStringLiteral("doomed.tbsession"));
  EXPECT_EQ(failure.title, QStringLiteral("Opening doomed.tbsession"));
  EXPECT_EQ(failure.message, QStringLiteral("disk on fire"));
}

TEST(BackgroundJobs, ANewerJobOfTheSameKeySupersedesTheOlder) {
  BackgroundJobs jobs;
  std::atomic<bool> release{false}, started{false};
  // A job that holds the worker so the next ones queue behind it.
  jobs.submit(QStringLiteral("blocker"), [&](JobProgress&) {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return BackgroundJobs::Apply();
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  QStringList shown;
  for (const char* name : {"trial 1", "trial 2", "trial 3"})
    jobs.submit(
        QStringLiteral("view"), [&, name](JobProgress&) { return [&, name] { shown << QString::fromLatin1(name); }; },
        QStringLiteral("view"));
  EXPECT_EQ(jobs.queued(), 1);  // trial 1 and 2 were dropped unstarted
  release = true;
  ASSERT_TRUE(jobs.waitForIdle(10000));
  EXPECT_EQ(shown, QStringList{QStringLiteral("trial 3")});
}

TEST(BackgroundJobs, CancelStopsARunningJobAndDropsAQueuedOne) {
  BackgroundJobs jobs;
  QSignalSpy cancelled(&jobs, &BackgroundJobs::jobCancelled);
  QSignalSpy failed(&jobs, &BackgroundJobs::jobFailed);
  QSignalSpy finished(&jobs, &BackgroundJobs::jobFinished);
  std::atomic<bool> started{false}, queuedRan{false};
  bool applied = false;
  // A job that reads until told to stop, then throws as a reader does on its cancel.
  const int reading = jobs.submit(QStringLiteral("reading"), [&](JobProgress& p) -> BackgroundJobs::Apply {
    started = true;
    while (!p.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    throw std::runtime_error("cancelled");
  });
  const int waiting = jobs.submit(QStringLiteral("waiting"), [&](JobProgress&) {
    queuedRan = true;
    return [&] { applied = true; };
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(jobs.cancel(waiting));
  EXPECT_TRUE(jobs.cancel(reading));
  ASSERT_TRUE(jobs.waitForIdle(10000));
  EXPECT_FALSE(queuedRan);
  EXPECT_FALSE(applied);
  ASSERT_EQ(cancelled.size(), 2);  // in the order they were submitted
  EXPECT_EQ(cancelled.at(0).at(0).toInt(), reading);
  EXPECT_EQ(cancelled.at(1).at(0).toInt(), waiting);
  EXPECT_EQ(failed.size(), 0);  // a cancel is not a failure
  EXPECT_EQ(finished.size(), 0);
  EXPECT_FALSE(jobs.cancel(reading));  // ended: nothing to cancel
}

TEST(BackgroundJobs, AJobThatEndsDespiteACancelIsAppliedAsUsual) {
  // A job past the point of no return (its transaction committed) returns its result: the window
  // must learn what it did, cancel or not.
  BackgroundJobs jobs;
  QSignalSpy cancelled(&jobs, &BackgroundJobs::jobCancelled);
  std::atomic<bool> started{false}, release{false};
  bool applied = false;
  const int id = jobs.submit(QStringLiteral("writing"), [&](JobProgress&) {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return [&] { applied = true; };
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(jobs.cancel(id));
  release = true;
  ASSERT_TRUE(jobs.waitForIdle(10000));
  EXPECT_TRUE(applied);
  EXPECT_EQ(cancelled.size(), 0);
}
