// BackgroundJobs: work that must not run on the GUI thread (opening, checking, loading, importing
// and exporting session files) runs here, one job after another on one worker thread, as hotspot
// and heaptrack parse off the GUI thread and publish results stage by stage.
//
// A job is a function run on the worker thread that returns a function run on the GUI thread:
// the first does the slow part with its own resources (its own SQLite connection), the second
// only hands plain results to models and views. Progress is reported from the job through
// JobProgress and arrives as a signal, throttled to a few per second. A job submitted with a key
// supersedes a queued job of the same key that has not started yet (clicking through trials only
// loads the last one), and a started job can see that it was superseded (cancelled()).
//
// cancel(id) is the user's Cancel: a queued job never starts, a running one sees cancelled() and
// stops where it can. A cancelled job that ends with an error or without a result reports
// jobCancelled; one that reached its end anyway (it wrote, say, and cannot unwrite) is applied as
// usual, so the window never misses what a job did.
//
// Exceptions thrown by a job become jobFailed with the job's kind, subject and the exception's
// sentence: whoever words the failure switches on the kind, never on the title. Nothing escapes
// into the event loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <QObject>
#include <QString>

namespace tunebench::ui {

// What a job does, for whoever reports its failure (SessionActions words each kind its own way).
enum class JobKind { Other, OpenSession, SaveSession, ImportLog, ImportTraces, Export, DeleteTrial, LoadTrial };

// What a job is: its kind, what it works on in words ("run.jsonl", "ddp-nw4 (2 torch.profiler
// traces)") and its title for the status bar ("Importing run.jsonl").
struct JobLabel {
  JobKind kind = JobKind::Other;
  QString subject;
};

struct JobFailure {
  int id = 0;
  JobKind kind = JobKind::Other;
  QString title;
  QString subject;
  QString message;  // the exception's sentence
  QString details;  // store::StoreError::details(): SQLite's own words, for the log and a Details section
};

// What a running job sees: where to report progress and whether it is still wanted.
class JobProgress {
 public:
  virtual ~JobProgress() = default;
  // `done` of `total` (total <= 0: unknown, a busy indicator) and what is happening in words.
  virtual void report(qint64 done, qint64 total, const QString& text) = 0;
  virtual bool cancelled() const = 0;
};

class BackgroundJobs : public QObject {
  Q_OBJECT
 public:
  using Apply = std::function<void()>;              // runs on the GUI thread
  using Work = std::function<Apply(JobProgress&)>;  // runs on the worker thread

  explicit BackgroundJobs(QObject* parent = nullptr);
  ~BackgroundJobs() override;  // cancels queued jobs, waits for the running one

  // Queues a job; returns its id. `key` non-empty: a queued job with the same key is dropped,
  // and a running one is told cancelled() (its result is then discarded).
  int submit(const QString& title, Work work, const QString& key = {}, const JobLabel& label = {});
  // Asks job `id` to stop (see above); false when it is not queued or running any more.
  bool cancel(int id);
  bool isBusy() const;  // a job queued or running
  int queued() const;
  // Tests and benchmarks: runs the event loop until no job is left (false after `timeoutMs`).
  bool waitForIdle(int timeoutMs);

 signals:
  void jobStarted(int id, const QString& title);
  void progress(int id, const QString& title, qint64 done, qint64 total, const QString& text);
  void jobFinished(int id, const QString& title);
  void jobFailed(const tunebench::ui::JobFailure& failure);
  void jobCancelled(int id, const QString& title);  // cancel(id) stopped it; nothing was applied
  void idle();                                      // the last job finished

 private:
  struct Job;
  class Reporter;
  void loop();
  void deliver(const std::shared_ptr<Job>& job, Apply apply, const QString& error, const QString& details);

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::shared_ptr<Job>> m_queue;
  std::shared_ptr<Job> m_running;
  int m_nextId = 1;
  int m_inFlight = 0;  // submitted and not yet delivered (GUI thread only)
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace tunebench::ui

Q_DECLARE_METATYPE(tunebench::ui::JobFailure)
