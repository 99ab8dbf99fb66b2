#include "ui/runner/background_jobs.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QThread>

#include "core/store/store_error.h"  // header only: a StoreError's details travel with its sentence

namespace tunebench::ui {

struct BackgroundJobs::Job {
  int id = 0;
  QString title;
  QString key;
  JobLabel label;
  Work work;
  std::atomic<bool> cancelled{false};      // superseded, or the window is closing: the result is stale
  std::atomic<bool> stopRequested{false};  // cancel(id): the job ends where it can
};

// Throttles progress to one signal per kIntervalMs (and always the first), posted to the GUI thread.
class BackgroundJobs::Reporter final : public JobProgress {
 public:
  static constexpr qint64 kIntervalMs = 100;
  Reporter(BackgroundJobs* owner, std::shared_ptr<Job> job) : m_owner(owner), m_job(std::move(job)) { m_clock.start(); }
  void report(qint64 done, qint64 total, const QString& text) override {
    if (m_sent && m_clock.elapsed() < kIntervalMs) return;
    m_sent = true;
    m_clock.restart();
    QPointer<BackgroundJobs> owner(m_owner);
    const int id = m_job->id;
    const QString title = m_job->title;
    QMetaObject::invokeMethod(
        m_owner,
        [owner, id, title, done, total, text] {
          if (owner) emit owner->progress(id, title, done, total, text);
        },
        Qt::QueuedConnection);
  }
  bool cancelled() const override { return m_job->cancelled || m_job->stopRequested; }

 private:
  BackgroundJobs* m_owner;
  std::shared_ptr<Job> m_job;
  QElapsedTimer m_clock;
  bool m_sent = false;
};

BackgroundJobs::BackgroundJobs(QObject* parent) : QObject(parent), m_thread([this] { loop(); }) {}

BackgroundJobs::~BackgroundJobs() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
    for (auto& job : m_queue) job->cancelled = true;
    m_queue.clear();
    if (m_running) m_running->cancelled = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

int BackgroundJobs::submit(const QString& title, Work work, const QString& key, const JobLabel& label) {
  auto job = std::make_shared<Job>();
  job->title = title;
  job->key = key;
  job->label = label;
  job->work = std::move(work);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    job->id = m_nextId++;
    if (!key.isEmpty()) {
      for (auto it = m_queue.begin(); it != m_queue.end();) {
        if ((*it)->key == key) {
          it = m_queue.erase(it);
          --m_inFlight;  // never delivered
        } else {
          ++it;
        }
      }
      if (m_running && m_running->key == key) m_running->cancelled = true;
    }
    m_queue.push_back(job);
    ++m_inFlight;
  }
  m_wake.notify_one();
  return job->id;
}

bool BackgroundJobs::cancel(int id) {
  std::lock_guard<std::mutex> lock(m_mutex);
  // A queued job stays in the queue: the loop skips its work and delivers it as cancelled, so
  // every job ends through deliver() in the order it was submitted.
  for (const auto& job : m_queue)
    if (job->id == id) {
      job->stopRequested = true;
      return true;
    }
  if (m_running && m_running->id == id) {
    m_running->stopRequested = true;
    return true;
  }
  return false;
}

bool BackgroundJobs::isBusy() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_inFlight > 0;
}

int BackgroundJobs::queued() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return int(m_queue.size());
}

bool BackgroundJobs::waitForIdle(int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (isBusy()) {
    if (clock.elapsed() > timeoutMs) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  QCoreApplication::processEvents();
  return true;
}

void BackgroundJobs::loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      if (m_stopping) return;
      job = m_queue.front();
      m_queue.pop_front();
      m_running = job;
    }
    Apply apply;
    QString error, details;  // details: a StoreError's SQLite words (JobFailure::details)
    Reporter reporter(this, job);
    if (!job->stopRequested) {  // else cancelled while it waited: it never starts
      const int id = job->id;
      const QString title = job->title;
      QPointer<BackgroundJobs> self(this);
      QMetaObject::invokeMethod(
          this,
          [self, id, title] {
            if (self) emit self->jobStarted(id, title);
          },
          Qt::QueuedConnection);
      try {
        apply = job->work(reporter);
      } catch (const store::StoreError& e) {
        error = QString::fromStdString(e.what());
        details = QString::fromStdString(e.details());
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
      } catch (...) {
        error = QStringLiteral("unexpected error");
      }
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_running.reset();
      if (m_stopping) return;
    }
    deliver(job, std::move(apply), error, details);
  }
}

void BackgroundJobs::deliver(const std::shared_ptr<Job>& job, Apply apply, const QString& error,
                             const QString& details) {
  QPointer<BackgroundJobs> self(this);
  QMetaObject::invokeMethod(
      this,
      [self, job, apply = std::move(apply), error, details] {
        if (!self) return;
        bool last = false;
        {
          std::lock_guard<std::mutex> lock(self->m_mutex);
          last = --self->m_inFlight == 0;
        }
        auto failure = [&job](const QString& message, const QString& why = {}) {
          return JobFailure{job->id, job->label.kind, job->title, job->label.subject, message, why};
        };
        // A superseded job's result is stale: the newer job's result is the one to show.
        if (!job->cancelled) {
          if (job->stopRequested && (!error.isEmpty() || !apply)) {
            emit self->jobCancelled(job->id, job->title);
          } else if (!error.isEmpty()) {
            emit self->jobFailed(failure(error, details));
          } else {
            try {
              if (apply) apply();
            } catch (const store::StoreError& e) {
              emit self->jobFailed(failure(QString::fromStdString(e.what()), QString::fromStdString(e.details())));
            } catch (const std::exception& e) {
              emit self->jobFailed(failure(QString::fromStdString(e.what())));
            }
            emit self->jobFinished(job->id, job->title);
          }
        }
        if (last) emit self->idle();
      },
      Qt::QueuedConnection);
}

}  // namespace tunebench::ui
