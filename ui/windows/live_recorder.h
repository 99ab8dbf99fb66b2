// LiveRecorder: writes the running trial into its session file on a thread of its own.
//
// Every commit happens on that thread: the store::TrialWriter lives there with its own flush
// thread turned off, and a timer there commits a quiet run's pending events, so the GUI thread
// never waits for the disk and no StoreError can escape from a Qt slot. A failed commit (a full
// disk, a file gone read-only) is reported once through writeFailed, the events keep arriving
// and are retried every few seconds; the trial itself runs on, and the live view has every
// event either way. Events beyond kMaxUnsaved while the disk refuses them are dropped and
// counted, so a long outage cannot exhaust memory.
//
// The recorder is driven by queued calls from SessionController (begin, add, finish) and never
// touches widgets.
#pragma once

#include <atomic>
#include <memory>

#include <QObject>

#include "ui/runner/runner_types.h"

class QTimer;

namespace tunebench::store {
class TrialWriter;
}

namespace tunebench::ui {

class LiveRecorder : public QObject {
  Q_OBJECT
 public:
  static constexpr int kFlushIntervalMs = 500;   // as TrialWriter's default: a kill loses ~0.5 s
  static constexpr int kRetryIntervalMs = 2000;  // after a failure
  static constexpr size_t kMaxUnsaved = 200000;  // events kept for a retry while writes fail

  LiveRecorder();
  ~LiveRecorder() override;

  // Events committed so far (any thread).
  qint64 committed() const { return m_committed; }

 public slots:
  // Starts writing trial `trialId` of the session at `path` (marks it running).
  void begin(const QString& path, qint64 trialId);
  void add(const tunebench::ui::EventBatch& batch);
  // Commits what is pending and sets the final status. `status` is a protocol::TrialStatus.
  void finish(int status, const QString& reason);
  // Drops the writer without a status (its destructor marks an unfinished trial interrupted).
  void close();

 signals:
  void writeFailed(const QString& message);
  void writeRecovered();
  // The trial's final status is in the file (ok), or could not be written (the caller should
  // set it through its own connection); `lost` events never reached the file.
  void finished(qint64 trialId, bool ok, qint64 lost, const QString& message);

 private:
  void flushNow();
  void retry();
  void failed(const std::exception& e);

  std::unique_ptr<store::TrialWriter> m_writer;
  QTimer* m_timer = nullptr;
  EventBatch m_unsaved;  // events held back while writes fail
  qint64 m_trialId = -1;
  qint64 m_lost = 0;
  bool m_failing = false;
  QString m_lastError;
  std::atomic<qint64> m_committed{0};
};

}  // namespace tunebench::ui
