#include "ui/runner/trial_queue.h"

#include <QTimer>

#include "ui/runner/trial_runner.h"

namespace tunebench::ui {

TrialQueue::TrialQueue(QObject* parent) : QObject(parent), m_runner(new TrialRunner(this)) {
  connect(m_runner, &TrialRunner::finished, this, [this](const TrialOutcome& outcome) {
    emit trialFinished(outcome);
    // Queued: the runner may still be inside start() (a trial refused before launch finishes at once).
    QTimer::singleShot(0, this, &TrialQueue::startNext);
  });
}

void TrialQueue::enqueue(const TrialRequest& request) {
  m_pending.push_back(request);
  emit queueChanged();
  if (!m_runner->isActive()) QTimer::singleShot(0, this, &TrialQueue::startNext);
}

void TrialQueue::clearPending() {
  m_pending.clear();
  emit queueChanged();
}

bool TrialQueue::remove(const QString& trialId) {
  for (int i = 0; i < m_pending.size(); ++i)
    if (m_pending[i].id == trialId) {
      m_pending.removeAt(i);
      emit queueChanged();
      return true;
    }
  return false;
}

void TrialQueue::stopAll() {
  clearPending();
  m_runner->stop();
}

bool TrialQueue::isIdle() const { return !m_runner->isActive() && m_pending.isEmpty(); }

void TrialQueue::startNext() {
  if (m_runner->isActive()) return;
  if (m_pending.isEmpty()) {
    emit drained();
    return;
  }
  const TrialRequest next = m_pending.takeFirst();
  emit queueChanged();
  emit trialStarting(next.id);
  m_runner->start(next);
}

}  // namespace tunebench::ui
