// TraceImportJob: reads torch.profiler traces (core/import) on a worker thread, for the GUI.
//
// Traces of hundreds of MB take seconds to read; the window stays responsive and shows the bytes
// read (progress) with a Cancel that stops the read at its next chunk. The job only reads: the
// trial is written by the caller on the GUI thread (SessionController::importTraceTrial), in one
// short transaction, so a cancelled or failed job leaves the session untouched. Its signals are
// emitted on the GUI thread. Destroying the job cancels the read and waits for the thread.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include <QObject>
#include <QStringList>

#include "core/import/trace_trial.h"

namespace tunebench::ui {

class TraceImportJob : public QObject {
  Q_OBJECT
 public:
  TraceImportJob(const QStringList& files, import::TraceImportOptions options, QObject* parent = nullptr);
  ~TraceImportJob() override;

  void start();
  void cancel() { m_cancel = true; }
  bool cancelled() const { return m_cancel; }
  const QStringList& files() const { return m_files; }
  // After succeeded(): the trial read.
  const import::TraceTrial& trial() const { return *m_trial; }

 signals:
  void progress(qint64 doneBytes, qint64 totalBytes);
  void succeeded();
  void failed(const QString& message);  // also after cancel()

 private:
  QStringList m_files;
  import::TraceImportOptions m_options;
  std::atomic<bool> m_cancel{false};
  std::atomic<qint64> m_posted{-1};  // last progress posted, in MB: one update per MB at most
  std::unique_ptr<import::TraceTrial> m_trial;
  std::thread m_thread;
};

}  // namespace tunebench::ui
