// LiveTrialTracker: the books of the trials this window runs and replays. Each gets an id and a
// row in the trials table (and, when it runs here, a row in the session file). While it runs, its
// row follows its progress and running figures (TrialStats); its events go to the log cache,
// pinned until it ends, so the view and a comparison can draw it without the file. It ends with
// its row's status and reason; trialFinished follows once a recorded trial's end is in the
// session file (a replay's at once).
//
// It knows the queue (to queue, drop and stop trials) and the replay playing, so "is anything
// running" and "cancel this trial" have one answer. It shows nothing: the window feeds it the
// sources' signals and updates the view and the status bar itself.
#pragma once

#include <optional>

#include <QObject>
#include <QPointer>

#include "core/launch/launch_plan.h"
#include "ui/models/trial_log_cache.h"
#include "ui/models/trial_stats.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class ReplaySource;
class SessionController;
class TrialQueue;
class TrialsModel;

class LiveTrialTracker : public QObject {
  Q_OBJECT
 public:
  LiveTrialTracker(TrialsModel* trials, SessionController* session, TrialQueue* queue, QObject* parent = nullptr);

  // Queues a trial: a new id ("t<date>-<time>-<n>"), its row (queued) in the table and the
  // session, then the queue (which starts it when idle). Returns the id.
  QString enqueue(const config::TrialConfig& config, const QString& source,
                  const std::optional<launch::LinkProbeRange>& linkProbe, const QString& workerProgram);
  // A loaded replay about to play: its row (named after the log file); returns its id.
  QString addReplay(ReplaySource* replay, const QString& fileName);

  // ---- fed by the live source (runner or replay) ----
  // The trial `id` starts: it becomes the current one, its events pinned. Returns its display name.
  QString start(const QString& id);
  void addEvents(const EventBatch& batch);
  void setProgress(const TrialProgress& progress);
  // The current trial ended; `recorded`: its end goes to the session file (trialFinished waits for it).
  void finish(const TrialOutcome& outcome, bool recorded);

  // A runner or a replay is active.
  bool isBusy() const;
  // Stops the running trial `id`, or drops it from the queue (its row "removed from the queue");
  // false when it is neither.
  bool cancel(const QString& id);
  // Stops the running ranks and the replay; true when ranks were running (they stop meanwhile).
  bool stop();
  // Stops everything and drops the queued trials (their rows "removed from the queue").
  void stopAll();

  QString current() const { return m_current; }
  // Every trial's events of this GUI session not (yet) in the session file: the running trial
  // and replays (bounded; stored trials are loaded from the file).
  TrialLogCache& logs() { return m_logs; }
  const TrialLogCache& logs() const { return m_logs; }

 signals:
  // A trial ended and, when it was recorded, its end is in the session file (listeners may
  // load it at once).
  void trialFinished(const tunebench::ui::TrialOutcome& outcome);
  // A queued trial was dropped before it ran (stopped: "removed from the queue"); its status is in
  // the session. Not a trialFinished: nothing ran.
  void removedFromQueue(const tunebench::ui::TrialOutcome& outcome);

 private:
  void markRemovedFromQueue(const QString& id);

  TrialsModel* m_trials;
  SessionController* m_session;
  TrialQueue* m_queue;
  QPointer<ReplaySource> m_replay;
  TrialLogCache m_logs;
  TrialStats m_stats;
  QString m_current;
  int m_counter = 0;
};

}  // namespace tunebench::ui
