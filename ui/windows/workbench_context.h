// WorkbenchContext: what the window's controllers (Analysis, Prediction, Link probe) may use of
// the workbench: the form, the trials table's model and selection, the session, the one launch
// path, the live trials and the queue, a widget to parent their dialogs, and whether the
// user's last choices are kept in QSettings. Plain pointers owned
// by the window, valid while it lives. The controllers never see the window itself: they own
// their actions and menus, which the window places, and report through statusMessage signals.
#pragma once

class QItemSelectionModel;
class QWidget;

namespace tunebench::ui {

class LiveTrialTracker;
class SessionController;
class TrialForm;
class TrialLauncher;
class TrialQueue;
class TrialsModel;

struct WorkbenchContext {
  QWidget* dialogParent = nullptr;           // the window: dialogs are parented to it
  TrialForm* form = nullptr;                 // the trial being set up
  TrialsModel* trials = nullptr;             // every trial of the session and this window
  QItemSelectionModel* selection = nullptr;  // the trials table's
  SessionController* session = nullptr;
  TrialLauncher* launcher = nullptr;  // every way to start a trial
  LiveTrialTracker* live = nullptr;   // trialFinished, the log cache, busy, cancel
  TrialQueue* queue = nullptr;        // its runner's live signals
  bool useSettings = false;           // the window keeps QSettings (last choices); tests run without
};

}  // namespace tunebench::ui
