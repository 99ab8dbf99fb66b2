#include "ui/windows/live_recorder.h"

#include <QTimer>

#include "core/store/store_error.h"
#include "core/store/trial_writer.h"

namespace tunebench::ui {

LiveRecorder::LiveRecorder() : m_timer(new QTimer(this)) {
  setObjectName(QStringLiteral("liveRecorder"));
  m_timer->setInterval(kFlushIntervalMs);
  connect(m_timer, &QTimer::timeout, this, [this] { m_failing ? retry() : flushNow(); });
}

LiveRecorder::~LiveRecorder() = default;

void LiveRecorder::begin(const QString& path, qint64 trialId) {
  m_writer.reset();  // a previous trial's writer marks its trial interrupted if it never finished
  m_unsaved.clear();
  m_trialId = trialId;
  m_lost = 0;
  m_failing = false;
  m_lastError.clear();
  m_committed = 0;
  try {
    store::TrialWriter::Options options;
    options.background_flush = false;  // every commit on this thread: add(), flush(), finish()
    m_writer = std::make_unique<store::TrialWriter>(path.toStdString(), trialId, options);
    m_timer->setInterval(kFlushIntervalMs);
    m_timer->start();
  } catch (const std::exception& e) {
    m_lastError = QString::fromStdString(e.what());
    emit writeFailed(QStringLiteral("this trial is not recorded in the session: %1").arg(m_lastError));
  }
}

void LiveRecorder::add(const EventBatch& batch) {
  if (!m_writer) {
    m_lost += qint64(batch.size());
    return;
  }
  if (m_failing) {
    // Hold the events back; a retry writes them. Beyond the budget they are dropped and counted.
    for (const auto& e : batch) {
      if (m_unsaved.size() < kMaxUnsaved)
        m_unsaved.push_back(e);
      else
        ++m_lost;
    }
    return;
  }
  try {
    for (const auto& e : batch) m_writer->add(e);
    m_committed = m_writer->committed();
  } catch (const std::exception& e) {
    failed(e);
  }
}

void LiveRecorder::flushNow() {
  if (!m_writer) return;
  try {
    m_writer->flush();
    m_committed = m_writer->committed();
  } catch (const std::exception& e) {
    failed(e);
  }
}

void LiveRecorder::failed(const std::exception& e) {
  m_lastError = QString::fromStdString(e.what());
  if (m_failing) return;
  m_failing = true;
  m_timer->setInterval(kRetryIntervalMs);
  emit writeFailed(QStringLiteral("events of the running trial are not recorded: %1. The trial goes on; "
                                  "Tunebench retries every %2 s.")
                       .arg(m_lastError)
                       .arg(kRetryIntervalMs / 1000));
}

void LiveRecorder::retry() {
  if (!m_writer) return;
  size_t moved = 0;  // events handed to the writer: they are in its pending batch from then on
  try {
    m_writer->flush();  // the batch that failed is still pending in the writer
    for (const protocol::Event& e : m_unsaved) {
      ++moved;  // counted first: add() enqueues the event before a commit inside it may throw
      m_writer->add(e);
    }
    m_writer->flush();
    m_unsaved.clear();
    m_committed = m_writer->committed();
    m_failing = false;
    m_timer->setInterval(kFlushIntervalMs);
    emit writeRecovered();
  } catch (const std::exception& e) {
    m_unsaved.erase(m_unsaved.begin(), m_unsaved.begin() + std::ptrdiff_t(moved));
    m_lastError = QString::fromStdString(e.what());
  }
}

void LiveRecorder::close() {
  m_timer->stop();
  m_writer.reset();
  m_unsaved.clear();
  m_trialId = -1;
}

void LiveRecorder::finish(int status, const QString& reason) {
  m_timer->stop();
  const qint64 id = m_trialId;
  if (!m_writer) {
    emit finished(id, false, m_lost, m_lastError);
    return;
  }
  if (m_failing) retry();
  bool ok = !m_failing;
  if (ok) {
    try {
      m_writer->finish(protocol::TrialStatus(status), reason.toStdString());
      m_committed = m_writer->committed();
    } catch (const std::exception& e) {
      m_lastError = QString::fromStdString(e.what());
      ok = false;
    }
  }
  const qint64 lost = m_lost + (ok ? 0 : qint64(m_unsaved.size()));
  // The writer goes first: destroying an unfinished writer marks its trial interrupted, and the
  // caller's status must land after that, not before.
  m_writer.reset();
  m_unsaved.clear();
  m_trialId = -1;
  emit finished(id, ok, lost, m_lastError);
}

}  // namespace tunebench::ui
