// MainWindow: the workbench. Trial form (left dock), the selected trial's timeline and plots
// (centre; the start page while the session is empty), trials table and log (bottom docks). It
// only creates the parts and wires them; the parts keep the books:
//   - LiveTrialTracker: the trials this window runs and replays (ids, rows, figures, log cache);
//   - TrialsPanel: the trials table and its grouping; TrialViewer: which trial the centre shows;
//   - SessionController / SessionActions / TraceImportActions: the session file and its gestures;
//   - TrialLauncher: every way to start a trial; TrialQueue: one trial after another;
//   - RunControl: Run, Queue, Stop, cancel and replay, and what the live sources say (the slots
//     below forward to it);
//   - AnalysisController, PredictionController, LinkProbeController: the Analysis menu, the
//     Prediction dock and the link probe, given a WorkbenchContext (never this window);
//   - DockLayout, RunStatus, JobStatus: where the docks go, and the status bar.
#pragma once

#include <QMainWindow>

#include "ui/runner/device_inventory.h"
#include "ui/runner/runner_types.h"

class QAction;
class QMenu;
class QStackedWidget;
class QTableView;

namespace tunebench::ui {

class AnalysisController;
class BackgroundJobs;
class DockLayout;
class JobStatus;
class LinkProbeController;
class LiveTrialTracker;
class LiveView;
class LogPane;
class PredictionController;
class RunControl;
class RunStatus;
class SessionActions;
class SessionController;
class StartPage;
class TraceImportActions;
class TrialForm;
class TrialGroupsView;
class TrialLauncher;
class TrialQueue;
class TrialsModel;
class TrialsPanel;
class TrialViewer;
class WorkbenchActions;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  struct Options {
    QString workerProgram;      // empty: find_worker_program()
    bool useSettings = true;    // load and save layout and last trial (QSettings)
    bool detectDevices = true;  // tests inject a DeviceInventory instead
    DeviceInventory devices;
    // The session file: opened (created when missing). Empty: the last session when useSettings,
    // else a throw-away one in a temporary folder. The window always has a session.
    QString sessionPath;
  };
  explicit MainWindow(const Options& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  // ---- the parts (tests and app/gui drive them) ----
  TrialForm* form() const { return m_form; }
  // The centre view: the selected trial, or the live run (TrialViewer decides which).
  LiveView* liveView() const { return m_live; }
  TrialsModel* trialsModel() const { return m_trials; }
  TrialsPanel* trialsPanel() const { return m_panel; }
  QTableView* trialsView() const;
  TrialGroupsView* groupsView() const;
  LogPane* logPane() const { return m_log; }
  TrialQueue* queue() const { return m_queue; }
  LiveTrialTracker* liveTrials() const { return m_tracker; }
  SessionController* session() const { return m_session; }
  SessionActions* sessionActions() const { return m_sessionActions; }
  TraceImportActions* traceImport() const { return m_traceImport; }
  TrialLauncher* launcher() const { return m_launcher; }
  TrialViewer* viewer() const { return m_viewer; }
  BackgroundJobs* jobs() const { return m_jobs; }
  StartPage* startPage() const { return m_startPage; }
  AnalysisController* analysis() const { return m_analysis; }
  PredictionController* prediction() const { return m_prediction; }
  LinkProbeController* linkProbe() const { return m_linkProbe; }
  DockLayout* docks() const { return m_docks; }
  RunStatus* runStatus() const { return m_runStatus; }
  QAction* action(const QString& objectName) const;
  QMenu* menu(const QString& objectName) const;
  bool isBusy() const;
  bool isStartPageShown() const;
  void showStartPage(bool show);
  // Selects rows of the trials table (indices as text, from 0); the last one is shown.
  void selectRows(const QStringList& rows);
  // Queues a trial as it is, through the launcher (validation, device check): its id, or an empty
  // string when it was refused or waits for the launch preview.
  QString queueConfig(const config::TrialConfig& config);

 public slots:
  // Validates the form and queues the trial (it starts at once when nothing runs). Returns false
  // when the form has problems (shown next to the fields) or the launch was refused.
  bool runTrial();
  void stopTrial();
  // Stops the trial `id` when it runs, or drops it from the queue (its row stopped, "removed from
  // the queue"); false when it is neither.
  bool cancelTrial(const QString& id);
  // Plays a recorded .jsonl event log into the live views; speed <= 0 plays as fast as possible.
  bool replayLog(const QString& path, double speed = 1.0);
  // Saves the three plots (PNG, or PDF / SVG when `path` ends so); returns the files written.
  QStringList exportPlots(const QString& path);

 signals:
  // LiveTrialTracker::trialFinished: a trial ended and, when it was recorded, its end is in the
  // session file (listeners may load it at once).
  void trialFinished(const tunebench::ui::TrialOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createSession();
  void createControllers();
  void createActions();  // the window's own (WorkbenchActions), wired, and every menu
  void createStatusBar();
  void updateActions();
  // An imported trial becomes the one shown, unless a run has the view or several rows are held.
  void showImported(const QString& recordId);
  void showStatus(const QString& text, int timeoutMs);

  Options m_options;
  DeviceInventory m_devices;
  TrialForm* m_form = nullptr;
  LiveView* m_live = nullptr;
  StartPage* m_startPage = nullptr;
  QStackedWidget* m_centre = nullptr;
  TrialsModel* m_trials = nullptr;
  TrialsPanel* m_panel = nullptr;
  LogPane* m_log = nullptr;
  TrialQueue* m_queue = nullptr;
  LiveTrialTracker* m_tracker = nullptr;
  BackgroundJobs* m_jobs = nullptr;
  DockLayout* m_docks = nullptr;
  RunStatus* m_runStatus = nullptr;
  JobStatus* m_jobStatus = nullptr;
  SessionController* m_session = nullptr;
  SessionActions* m_sessionActions = nullptr;
  TraceImportActions* m_traceImport = nullptr;
  TrialLauncher* m_launcher = nullptr;
  TrialViewer* m_viewer = nullptr;
  AnalysisController* m_analysis = nullptr;
  PredictionController* m_prediction = nullptr;
  LinkProbeController* m_linkProbe = nullptr;
  RunControl* m_run = nullptr;
  WorkbenchActions* m_actions = nullptr;
};

}  // namespace tunebench::ui
