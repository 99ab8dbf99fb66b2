// SessionActions: the window's File and Trial menu entries for sessions, the trials table's
// context menu, drag and drop of .tbsession / .jsonl / torch.profiler trace files, the start page
// and the recent list. Traces go on to TraceImportActions.
//
// It only wires user gestures to SessionController and reports results (status bar, log pane,
// message boxes); the store work itself is the controller's. Message boxes are opened window-modal
// without blocking (open(), not exec()), so an error never stalls a run or a test; the blocking
// dialogs (file pickers, confirmations) sit only in the action handlers, while the public methods
// below take their answers as arguments and are what tests drive.
#pragma once

#include <QObject>
#include <QStringList>

#include "ui/runner/runner_types.h"

class QAction;
class QMenu;
class QMessageBox;
class QStackedWidget;

namespace tunebench::ui {

class MainWindow;
class SessionController;
class StartPage;
class TraceImportActions;

class SessionActions : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxRecent = 8;

  SessionActions(MainWindow* window, SessionController* session, bool useSettings);

  // Opens `sessionPath` (created when missing); empty: the last session (settings) or a new one.
  void openInitialSession(const QString& sessionPath);

  // ---- what the menu entries do, without their dialogs ----
  bool newSession(const QString& path);
  bool openSession(const QString& path);
  bool openExample(const QString& examplePath);  // opens a copy in the user's data folder
  bool saveSessionAs(const QString& path);
  bool importLog(const QString& jsonlPath);
  // Sessions are opened, event logs and traces (told apart by content) imported; all the traces
  // among `files` are the ranks of one trial, read off the GUI thread (TraceImportActions).
  bool importFiles(const QStringList& files);
  TraceImportActions* traceImport() const { return m_traceImport; }
  bool exportTrials(const QStringList& recordIds, const QString& path);  // .csv (steps) or .json
  bool exportSummariesCsv(const QStringList& recordIds, const QString& path);
  bool exportChromeTrace(const QString& recordId, const QString& path);
  bool rerunWithChanges(const QString& recordId);  // loads the config into the form
  // Asks before a config from a foreign session runs: argv and environment. True to go on.
  bool confirmLaunch(const TrialRequest& request);

  QStringList selectedTrialIds() const;
  QStringList recentSessions() const { return m_recent; }
  StartPage* startPage() const { return m_startPage; }
  void showStartPage(bool show);
  bool isStartPageShown() const;
  // The last error shown (tests read it; the user sees the message box).
  QString lastError() const { return m_lastError; }
  QMessageBox* lastMessageBox() const { return m_lastBox; }
  // A non-blocking message box and the log pane (also for TraceImportActions).
  void showError(const QString& title, const QString& message);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void createActions();
  void updateTitle();
  void updateTrialActions();
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  QString askSavePath(const QString& title, const QString& fileName, const QString& filter);

  MainWindow* m_window;
  SessionController* m_session;
  StartPage* m_startPage = nullptr;
  TraceImportActions* m_traceImport = nullptr;
  QStackedWidget* m_centre = nullptr;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_contextMenu = nullptr;
  QList<QAction*> m_trialActions;  // need a selected trial
  QStringList m_recent;
  QString m_lastError;
  QMessageBox* m_lastBox = nullptr;
  bool m_useSettings;
};

}  // namespace tunebench::ui
