// TraceImportActions: the window's torch.profiler side — importing per-rank traces as one trial
// (off the GUI thread, with a progress dialog and Cancel) and the Trial menu's "Settings…" dialog
// where an imported trial's unknown settings are filled in.
//
// SessionActions routes files here (File > Import, drag and drop) once their content says they
// are traces; this class wires a TraceImportJob to a QProgressDialog and hands the trial read to
// SessionController, which writes it in one transaction. Errors go through
// SessionActions::showError (a non-blocking message box and the log pane).
#pragma once

#include <QObject>
#include <QPointer>
#include <QProgressDialog>  // QPointer needs the complete type
#include <QStringList>

#include "ui/windows/known_settings_dialog.h"
#include "ui/windows/trace_import_job.h"

class QAction;

namespace tunebench::ui {

class MainWindow;
class SessionActions;
class SessionController;

class TraceImportActions : public QObject {
  Q_OBJECT
 public:
  TraceImportActions(MainWindow* window, SessionController* session, SessionActions* actions);

  // Starts reading `files` (the ranks of one run) as one trial; false when an import is running.
  bool importTraces(const QStringList& files, const QString& name = {}, const QStringList& settings = {});
  TraceImportJob* runningImport() const { return m_job; }
  QProgressDialog* progressDialog() const { return m_progress; }

  // The settings of a stored trial (read-only; editable for imported trials). Opened without
  // blocking; nullptr when the row is not a stored trial.
  KnownSettingsDialog* showSettings(const QString& recordId);
  KnownSettingsDialog* settingsDialog() const { return m_dialog; }

 signals:
  void traceImported(const QString& recordId);
  void traceImportEnded();  // after success, failure or cancel

 private:
  void finishImport(bool ok, const QString& message);

  MainWindow* m_window;
  SessionController* m_session;
  SessionActions* m_actions;
  QAction* m_settingsAction = nullptr;
  QPointer<TraceImportJob> m_job;
  QPointer<QProgressDialog> m_progress;
  QPointer<KnownSettingsDialog> m_dialog;
};

}  // namespace tunebench::ui
