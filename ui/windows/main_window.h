// MainWindow: the workbench. Trial form (left dock), live plots (centre), trials table and log
// (bottom docks). It only wires: runner/replay signals -> live view, trials model, log pane.
//
// Plug-in points for other issues: the session store (issue 6) can fill trialsModel() from
// TrialRecords and listen to trialFinished; the comparison view (issue 7) can take selected rows
// of trialsModel() (TrialsModel::TrialIdRole). Both get File/View menu entries via menu().
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
class QTableView;

namespace tunebench::ui {

class AnalysisController;
class LiveSource;
class LiveView;
class LogPane;
class ReplaySource;
class SessionActions;
class SessionController;
class TrialForm;
class TrialQueue;
class TrialsModel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  struct Options {
    QString workerProgram;      // empty: find_worker_program()
    bool useSettings = true;     // load and save layout and last trial (QSettings)
    bool detectDevices = true;  // tests inject a DeviceInventory instead
    DeviceInventory devices;
    // The session file: opened (created when missing). Empty: the last session when useSettings,
    // else a throw-away one in a temporary folder. The window always has a session.
    QString sessionPath;
  };
  explicit MainWindow(const Options& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  TrialForm* form() const { return m_form; }
  LiveView* liveView() const { return m_live; }
  TrialsModel* trialsModel() const { return m_trials; }
  QTableView* trialsView() const { return m_table; }
  LogPane* logPane() const { return m_log; }
  TrialQueue* queue() const { return m_queue; }
  SessionController* session() const { return m_session; }
  SessionActions* sessionActions() const { return m_sessionActions; }
  QAction* action(const QString& objectName) const;
  QMenu* menu(const QString& title) const;
  bool isBusy() const;

  // Issue 7 (comparison): every trial's events of this session, and the Analysis menu's owner
  // (its setTrialLogProvider lets the session store supply logs of loaded trials).
  TrialLogCache& trialLogs() { return m_logs; }
  const TrialLogCache& trialLogs() const { return m_logs; }
  AnalysisController* analysis() const { return m_analysis; }
  // Queues a trial as it is (a follow-up or sweep point): a row in the table, then the queue.
  // Returns its id, or an empty string when the config is invalid (nothing queued).
  QString queueConfig(const config::TrialConfig& config);

 public slots:
  // Validates the form and queues the trial (it starts at once when nothing runs).
  // Returns false when the form has problems (shown next to the fields).
  bool runTrial();
  void stopTrial();
  // Plays a recorded .jsonl log into the live views; speed <= 0 plays as fast as possible.
  bool replayLog(const QString& path, double speed = 1.0);
  // Saves the three plots (PNG, or PDF / SVG when `path` ends so); returns the files written.
  QStringList exportPlots(const QString& path);

 signals:
  void trialFinished(const tunebench::ui::TrialOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void createDocks();
  void connectSource(LiveSource* source);
  void onTrialStarting(const QString& id);
  void onEvents(const EventBatch& batch);
  void onProgress(const TrialProgress& progress);
  void onFinished(const TrialOutcome& outcome);
  void updateActions();
  void loadSettings();
  void saveSettings();

  Options m_options;
  TrialForm* m_form = nullptr;
  LiveView* m_live = nullptr;
  TrialsModel* m_trials = nullptr;
  QTableView* m_table = nullptr;
  LogPane* m_log = nullptr;
  TrialQueue* m_queue = nullptr;
  ReplaySource* m_replay = nullptr;
  QLabel* m_statusProgress = nullptr;
  QLabel* m_statusDevices = nullptr;
  QProgressBar* m_progressBar = nullptr;
  SessionController* m_session = nullptr;
  SessionActions* m_sessionActions = nullptr;
  TrialStats m_stats;
  QString m_currentTrial;
  int m_counter = 0;
  TrialLogCache m_logs;                     // issue 7
  AnalysisController* m_analysis = nullptr;  // issue 7
};

}  // namespace tunebench::ui
