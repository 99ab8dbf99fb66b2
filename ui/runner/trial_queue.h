// TrialQueue: trials run one after another through one TrialRunner.
//
// The queue owns the runner and forwards nothing itself: listeners connect to runner() for the
// live signals and to trialFinished/queueChanged for bookkeeping.
#pragma once

#include <QList>
#include <QObject>

#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class TrialRunner;

class TrialQueue : public QObject {
  Q_OBJECT
 public:
  explicit TrialQueue(QObject* parent = nullptr);

  TrialRunner* runner() const { return m_runner; }
  // Appends a trial; starts it at once when nothing runs and the queue is not paused.
  void enqueue(const TrialRequest& request);
  // Drops trials not yet started (the running one continues).
  void clearPending();
  // Drops one trial not yet started; false when it is not waiting (running, done or unknown).
  bool remove(const QString& trialId);
  // Stops the running trial and drops the pending ones.
  void stopAll();
  QList<TrialRequest> pending() const { return m_pending; }
  bool isIdle() const;

 signals:
  void trialStarting(const QString& trialId);
  void trialFinished(const tunebench::ui::TrialOutcome& outcome);
  void queueChanged();
  void drained();  // the last queued trial finished

 private:
  void startNext();

  TrialRunner* m_runner = nullptr;
  QList<TrialRequest> m_pending;
};

}  // namespace tunebench::ui
