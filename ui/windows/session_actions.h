// SessionActions: the session's menu entries and gestures: New / Open (sessions and reports) /
// Open recent / Save As / Import, the exports of selected trials (tables, traces, the report), the Trial entries (run again, rename, annotate,
// delete), the trials table's context menu and drag and drop of session files and logs.
//
// It owns its actions and menus and reports through signals; it knows the SessionController, the
// trials table's selection and a widget to parent dialogs, never the main window. The window
// places fileMenu(), trialActions(), examplesAction() and contextMenu() where it wants them and
// connects the signals to its status bar, log pane, form and start page. Dialogs are opened
// window-modal without blocking (open(), never exec()), so nothing here stalls a live run; the
// public methods take the dialogs' answers as arguments and are what tests drive.
//
// Importers are pluggable (addImporter): the File menu's Import entry (several files at once) and
// drag and drop offer every registered kind of file; the event log (.jsonl) is the built-in one.
#pragma once

#include <functional>

#include <QList>
#include <QMessageBox>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include "core/config/trial_config.h"

class QAction;
class QItemSelectionModel;
class QMenu;
class QMimeData;
class QWidget;

namespace tunebench::ui {

class SessionController;
class TrialsModel;

class SessionActions : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxRecent = 8;

  // A kind of file File → Import and drag and drop take. A gesture's files are handed out by
  // `accepts` (by name or by content; importers added later are asked first) and each importer
  // gets all of its files at once: the ranks of one torch.profiler run are one trial.
  struct Importer {
    QString name;                                          // "Event log"
    QStringList patterns;                                  // file dialog globs: {"*.jsonl"}
    std::function<bool(const QString& path)> accepts;      // this kind of file?
    std::function<bool(const QStringList& paths)> import;  // starts the import; false when refused
  };

  SessionActions(SessionController* session, TrialsModel* trials, QItemSelectionModel* selection, QWidget* dialogParent,
                 bool useSettings, QObject* parent = nullptr);

  // ---- what the window places ----
  QMenu* fileMenu() const { return m_fileMenu; }  // session entries; the window may append its own
  QList<QAction*> trialActions() const;           // run again, rename, annotate, delete, added ones
  // Another entry of a stored trial (an importer's Settings…): in trialActions() and in the context
  // menu beside the trial's own entries. Its owner keeps it enabled.
  void addTrialAction(QAction* action);
  QAction* examplesAction() const { return m_examples; }
  QMenu* contextMenu() const { return m_contextMenu; }

  void addImporter(const Importer& importer);
  // Opens `sessionPath` (created when missing); empty: the last session (settings) or a new one.
  void openInitialSession(const QString& sessionPath);

  // ---- what the menu entries do, without their dialogs (background jobs: true = started) ----
  bool newSession(const QString& path);
  bool openSession(const QString& path);
  bool openExample(const QString& examplePath);  // opens a copy in the user's data folder
  bool saveSessionAs(const QString& path);
  bool importLog(const QString& jsonlPath);
  // The trials a Tunebench HTML report carries, into this session (Import, drop). Open of a
  // report (openSession with an .html) makes them a new session instead.
  bool importReport(const QString& htmlPath);
  // Sessions among `paths` are opened, the other files handed to the importers that accept them.
  bool importFiles(const QStringList& paths);
  bool exportTrials(const QStringList& recordIds, const QString& path);  // .csv (steps) or .json
  bool exportSummariesCsv(const QStringList& recordIds, const QString& path);
  bool exportChromeTrace(const QStringList& recordIds, const QString& path);  // one process per trial and rank
  // The report of these trials: .md a Markdown summary, anything else the HTML report (".html"
  // added). askExportReport asks for the path first (File menu, context menu, comparison window).
  bool exportReport(const QStringList& recordIds, const QString& path);
  void askExportReport(const QStringList& recordIds);
  bool rerunWithChanges(const QString& recordId);                             // asks for the config to go into the form

  // Drag and drop: `target` (the window) takes the files canDrop() accepts and hands them to drop().
  void acceptDropsOn(QWidget* target);
  bool canDrop(const QMimeData* mime) const;
  bool drop(const QMimeData* mime);

  QStringList selectedTrialIds() const;
  QStringList recentSessions() const { return m_recent; }
  // A session the user made here (New, the first session, Save As of their own): opened again by
  // any way (Open recent, Open, the start page, a drop) it stays theirs, so its configs run without
  // the preview meant for someone else's file. Everything else opened from disk is foreign.
  bool isOwn(const QString& path) const;
  // The folder export dialogs start in: the last one used (remembered in the settings).
  QString exportDir() const { return m_exportDir; }
  void setBusy(bool busy) { m_busy = busy; }  // a trial runs: no switching sessions
  // The last error shown (tests read it; the user sees the message box).
  QString lastError() const { return m_lastError; }
  QMessageBox* lastMessageBox() const { return m_lastBox; }
  // A window-modal, non-blocking message box and errorLogged: how the session's gestures and the
  // importers (TraceImportActions) report what failed.
  // A plain sentence in the box; `details` (a StoreError's SQLite words) only in its Details section
  // and the log.
  void showError(const QString& title, const QString& message, const QString& details = {});

 signals:
  void statusMessage(const QString& text, int timeoutMs);
  void logMessage(const QString& text);
  void errorLogged(const QString& text);
  // "Run again with changes": put this config into the form (origin: the stored trial).
  void configRequested(const tunebench::config::TrialConfig& config, const QString& source);
  void startPageRequested(bool show);
  // Another session is the window's now (opened, new, an example; not Save As continuing in its
  // copy): the log and the last run's status belong to the previous one.
  void sessionSwitched();
  void recentChanged(const QStringList& recent);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;  // the drop target's drag events

 private:
  void createActions();
  void updateTrialActions();
  void addRecent(const QString& path);
  void addOwn(const QString& path);
  void rebuildRecentMenu();
  void rememberExportDir(const QString& path);
  QString importFilter() const;
  // Save dialog (window-modal, not blocking) that calls `chosen` with the path.
  void askSavePath(const QString& title, const QString& fileName, const QString& filter,
                   std::function<void(const QString&)> chosen);

  SessionController* m_session;
  TrialsModel* m_trials;
  QItemSelectionModel* m_selection;
  QWidget* m_parent;
  QMenu* m_fileMenu = nullptr;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_contextMenu = nullptr;
  QAction* m_examples = nullptr;
  QList<QAction*> m_trialActions;  // need a selected trial
  QList<QAction*> m_trialMenuActions;
  QList<Importer> m_importers;
  QStringList m_recent;
  QStringList m_own;  // absolute paths of the sessions the user made (isOwn)
  QString m_current;      // the session shown (absolute path)
  QString m_continuesIn;  // Save As wrote this copy: the session continues there
  QString m_exportDir;
  QString m_lastError;
  QPointer<QMessageBox> m_lastBox;
  bool m_useSettings;
  bool m_busy = false;
  QWidget* m_dropTarget = nullptr;
  bool m_dropAccepted = false;  // asked once per drag (the importers may read the files' heads)
};

// Where sessions the user makes are kept: <data dir>/tunebench/sessions (created when missing).
QString user_sessions_dir();

}  // namespace tunebench::ui
