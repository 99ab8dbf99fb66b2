// MainWindow: the workbench. Trial form (left dock), the selected trial's timeline and plots
// (centre; the start page while the session is empty), trials table and log (bottom docks). It
// only wires: runner/replay signals -> view, trials model, log pane; the session's actions and
// the Analysis menu report through signals; every way to start a trial goes through one
// TrialLauncher.
#pragma once

#include <memory>

#include <QMainWindow>

#include "ui/models/trial_log_cache.h"
#include "ui/models/trial_stats.h"
#include "ui/runner/device_inventory.h"
#include "ui/runner/runner_types.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QTableView;
class QTimer;

namespace tunebench::ui {

class AnalysisController;
class BackgroundJobs;
class LinkProbeController;
class LiveSource;
class LiveView;
class LogPane;
class PredictionController;
class ReplaySource;
class SessionActions;
class SessionController;
class StartPage;
class TraceImportActions;
class TrialForm;
class TrialGroupsView;
class TrialLauncher;
class TrialQueue;
class TrialsModel;
class TrialViewer;

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

  TrialForm* form() const { return m_form; }
  // The centre view: the selected trial, or the live run (TrialViewer decides which).
  LiveView* liveView() const { return m_live; }
  TrialsModel* trialsModel() const { return m_trials; }
  QTableView* trialsView() const { return m_table; }
  TrialGroupsView* groupsView() const { return m_groups; }
  LogPane* logPane() const { return m_log; }
  TrialQueue* queue() const { return m_queue; }
  SessionController* session() const { return m_session; }
  SessionActions* sessionActions() const { return m_sessionActions; }
  TraceImportActions* traceImport() const { return m_traceImport; }
  TrialLauncher* launcher() const { return m_launcher; }
  TrialViewer* viewer() const { return m_viewer; }
  BackgroundJobs* jobs() const { return m_jobs; }
  StartPage* startPage() const { return m_startPage; }
  // Whether the window loads and saves QSettings (layout, last choices); tests run without.
  bool usesSettings() const { return m_options.useSettings; }
  QAction* action(const QString& objectName) const;
  QMenu* menu(const QString& objectName) const;
  bool isBusy() const;
  bool isStartPageShown() const;
  void showStartPage(bool show);
  // Selects rows of the trials table (indices as text, from 0); the last one is shown.
  void selectRows(const QStringList& rows);

  // Every trial's events of this GUI session not (yet) in the session file: the running trial
  // and replays (bounded; stored trials are loaded from the file). The Analysis menu's owner.
  TrialLogCache& trialLogs() { return m_logs; }
  const TrialLogCache& trialLogs() const { return m_logs; }
  AnalysisController* analysis() const { return m_analysis; }
  PredictionController* prediction() const { return m_prediction; }
  // Trial > Measure the link… and its dialog (the link probe of the form's ranks).
  LinkProbeController* linkProbe() const { return m_linkProbe; }
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
  // Plays a recorded .jsonl log into the live views; speed <= 0 plays as fast as possible.
  bool replayLog(const QString& path, double speed = 1.0);
  // Saves the three plots (PNG, or PDF / SVG when `path` ends so); returns the files written.
  QStringList exportPlots(const QString& path);

 signals:
  // A trial ended and, when it was recorded, its end is in the session file (listeners may
  // load it at once).
  void trialFinished(const tunebench::ui::TrialOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void createActions();
  void createDocks();
  void createStatusBar();
  void connectSource(LiveSource* source, bool recorded);
  QString enqueueTrial(const config::TrialConfig& config, const QString& source,
                       const std::optional<launch::LinkProbeRange>& linkProbe);
  void markRemovedFromQueue(const QString& id);
  void onTrialStarting(const QString& id);
  void onEvents(const EventBatch& batch);
  void onProgress(const TrialProgress& progress);
  void onFinished(const TrialOutcome& outcome, bool recorded);
  void updateActions();
  // The run's status in the status bar ("" hides it) and a trial's name for it (never its id).
  void setRunStatus(const QString& text);
  QString displayName(const QString& recordId) const;
  // An imported trial becomes the one shown, unless a run has the view or several rows are held.
  void showImported(const QString& recordId);
  void keepDockShares();
  // The trials table's columns: fitted to their contents, the name elided before the reason is.
  void fitTrialsTable();
  void loadSettings();
  void saveSettings();

  Options m_options;
  DeviceInventory m_devices;
  TrialForm* m_form = nullptr;
  LiveView* m_live = nullptr;
  StartPage* m_startPage = nullptr;
  QStackedWidget* m_centre = nullptr;
  TrialsModel* m_trials = nullptr;
  QTableView* m_table = nullptr;
  TrialGroupsView* m_groups = nullptr;
  LogPane* m_log = nullptr;
  TrialQueue* m_queue = nullptr;
  ReplaySource* m_replay = nullptr;
  BackgroundJobs* m_jobs = nullptr;
  QLabel* m_statusProgress = nullptr;
  QLabel* m_statusDevices = nullptr;
  QLabel* m_jobLabel = nullptr;
  QProgressBar* m_progressBar = nullptr;
  QProgressBar* m_jobBar = nullptr;
  SessionController* m_session = nullptr;
  SessionActions* m_sessionActions = nullptr;
  TraceImportActions* m_traceImport = nullptr;
  TrialLauncher* m_launcher = nullptr;
  TrialViewer* m_viewer = nullptr;
  TrialStats m_stats;
  QString m_currentTrial;
  int m_counter = 0;
  TrialLogCache m_logs;
  AnalysisController* m_analysis = nullptr;
  PredictionController* m_prediction = nullptr;
  LinkProbeController* m_linkProbe = nullptr;
  QTimer* m_refitTable = nullptr;
  bool m_docksArranged = false;  // the user moved a dock splitter: keep their shares
  bool m_dropAccepted = false;   // asked once per drag (the importers may read the files' heads)
};

}  // namespace tunebench::ui
