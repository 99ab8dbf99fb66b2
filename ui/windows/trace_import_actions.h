// TraceImportActions: the window's torch.profiler side — importing one run's per-rank traces as
// one trial, and the Trial menu's "Settings…" dialog where an imported trial's unknown settings
// are filled in.
//
// It registers an importer with SessionActions (addImporter): File > Import and drag and drop hand
// it every trace of one gesture at once (told apart from event logs by content,
// import::detect_file_kind), and it starts SessionController::importTraceTrial, a background job
// that reads with progress and writes the trial in one transaction. A progress dialog (not
// modal: a run goes on being watched and stopped) shows the bytes read and has Cancel
// (BackgroundJobs::cancel), after which nothing was added. Failures are reported by SessionActions
// like every import's; what was imported goes out as statusMessage / logMessage, and
// traceImported(recordId) lets the window show the new trial.
//
// Like SessionActions it knows no window: its settingsAction() joins SessionActions' trial entries
// (which the window places), and it opens its dialogs with open(), never exec().
#pragma once

#include <QObject>
#include <QPointer>
#include <QProgressDialog>  // QPointer needs the complete type
#include <QStringList>

#include "ui/windows/known_settings_dialog.h"

class QAction;
class QItemSelectionModel;
class QWidget;

namespace tunebench::import {
struct TraceImportResult;
}

namespace tunebench::ui {

class SessionActions;
class SessionController;

class TraceImportActions : public QObject {
  Q_OBJECT
 public:
  TraceImportActions(SessionController* session, SessionActions* actions, QItemSelectionModel* selection,
                     QWidget* dialogParent, QObject* parent = nullptr);

  // Starts importing `files` (the ranks of one run) as one trial; false when refused (an import is
  // running, or there is no session: shown through SessionActions::showError).
  bool importTraces(const QStringList& files, const QString& name = {}, const QStringList& settings = {});
  bool isImporting() const { return m_job != 0; }
  QProgressDialog* progressDialog() const { return m_progress; }

  // Trial > Settings… (one of SessionActions' trial entries): enabled for one selected trial.
  QAction* settingsAction() const { return m_settingsAction; }
  // The settings of a stored trial (read-only; editable for imported trials). Opened without
  // blocking; nullptr when the row is not a stored trial.
  KnownSettingsDialog* showSettings(const QString& recordId);
  KnownSettingsDialog* settingsDialog() const { return m_dialog; }

 signals:
  void statusMessage(const QString& text, int timeoutMs);
  void logMessage(const QString& text);
  void traceImported(const QString& recordId);
  void traceImportEnded();  // after success, failure or cancel
  // Trial > Settings… changed a trial's known settings (what a view of it shows may change).
  void settingsSaved(const QString& recordId);

 private:
  void reportImported(const QStringList& files, const import::TraceImportResult& result, const QString& recordId);
  void onJobEnded(int id, bool cancelled);

  SessionController* m_session;
  SessionActions* m_actions;
  QWidget* m_parent;
  QAction* m_settingsAction = nullptr;
  int m_job = 0;  // the running import's BackgroundJobs id
  QPointer<QProgressDialog> m_progress;
  QPointer<KnownSettingsDialog> m_dialog;
};

}  // namespace tunebench::ui
