// RunControl: the window's run flow. Run and Queue (the form's trial, through the TrialLauncher),
// Stop, cancelling a queued or running trial, and replaying a recorded event log; then, for the
// queue's runner and each replay, the live source's start, events, progress, log lines and end go
// to the TrialViewer, the LiveTrialTracker, the LiveView, RunStatus and the LogPane. It never sees
// the window: the start page, the status bar's messages and the actions' busy state are asked for
// through signals.
#pragma once

#include <QObject>
#include <QPointer>

#include "core/config/trial_config.h"
#include "ui/runner/replay_source.h"  // QPointer needs the complete type
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class LiveSource;
class LiveTrialTracker;
class LiveView;
class LogPane;
class RunStatus;
class SessionActions;
class TrialForm;
class TrialLauncher;
class TrialQueue;
class TrialsPanel;
class TrialViewer;

class RunControl : public QObject {
  Q_OBJECT
 public:
  // Plain pointers owned by the window, valid while it lives. Every member has a type of its own,
  // so a brace list in the wrong order does not compile.
  struct Parts {
    TrialForm* form = nullptr;
    TrialLauncher* launcher = nullptr;
    TrialQueue* queue = nullptr;  // its runner is connected at once
    LiveTrialTracker* tracker = nullptr;
    TrialViewer* viewer = nullptr;
    TrialsPanel* panel = nullptr;
    LiveView* live = nullptr;
    RunStatus* runStatus = nullptr;
    SessionActions* sessionActions = nullptr;  // busy while a trial runs
    LogPane* log = nullptr;
  };
  RunControl(const Parts& parts, QObject* parent = nullptr);

  // MainWindow's slots of the same names (documented there).
  bool runTrial();
  QString queueConfig(const config::TrialConfig& config);
  void stopTrial();
  bool cancelTrial(const QString& id);
  bool replayLog(const QString& path, double speed);
  void stopReplay();  // the window closes

 signals:
  void statusMessage(const QString& text, int timeoutMs);
  void statusCleared();  // a run starts: its progress is the news now
  void liveShown();      // a run or replay starts: the centre shows it, not the start page
  void busyChanged();    // a trial started, ended or left the queue: the actions follow

 private:
  void connectSource(LiveSource* source, bool recorded);
  void onTrialStarting(const QString& id);
  void onEvents(const EventBatch& batch);
  void onProgress(const TrialProgress& progress);
  void onFinished(const TrialOutcome& outcome, bool recorded);

  Parts m_parts;
  QPointer<ReplaySource> m_replay;
};

}  // namespace tunebench::ui
