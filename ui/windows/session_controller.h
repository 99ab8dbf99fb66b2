// SessionController: the window's current session (.tbsession) and the trials table over it.
//
// The window always has one session. Trials queued in the window are added to it, a live run is
// written while it runs through a store::TrialWriter (its own connection and flush thread: a
// GUI killed mid-run leaves every committed step in the file, at most ~0.5 s lost), and the end
// of a run sets the trial done/failed/stopped with its reason. Opening a session refills the
// TrialsModel from the file. Every store failure becomes errorString() (the StoreError sentence)
// and leaves the current session as it was; nothing here shows a dialog.
//
// Rows of the model are keyed by a QString id: live trials keep their run id (the --trial the
// workers stamp on events), trials loaded from a file get "s<store id>". storeId() maps back.
#pragma once

#include <map>
#include <memory>
#include <optional>

#include <QHash>
#include <QObject>
#include <QStringList>

#include "core/import/trace_import.h"
#include "core/store/event_log_import.h"
#include "core/store/records.h"
#include "ui/models/trial_record.h"
#include "ui/runner/runner_types.h"

class QTemporaryDir;

namespace tunebench::store {
class SessionStore;
class TrialWriter;
}  // namespace tunebench::store

namespace tunebench::ui {

class TrialsModel;

// A stored trial as a row of the trials table; `summaries` are its ranks' done events.
TrialRecord to_trial_record(const store::TrialInfo& info, const std::map<int, protocol::Done>& summaries);

class SessionController : public QObject {
  Q_OBJECT
 public:
  explicit SessionController(TrialsModel* model, QObject* parent = nullptr);
  ~SessionController() override;  // a live trial still running is flushed and marked interrupted

  // ---- the session file (false + errorString() on failure; the current session stays) ----
  bool newSession(const QString& path, const QString& name = {});
  // `foreign`: the file may come from someone else, so a config taken from it is shown before it
  // runs (needsLaunchConfirmation()).
  bool openSession(const QString& path, bool foreign = true);
  // A session in a temporary folder that lives as long as this controller (tests, --no-restore).
  bool newScratchSession();
  bool saveAs(const QString& path);
  std::optional<store::ImportResult> importLog(const QString& jsonlPath, const QString& name = {});
  // Writes a trial read from torch.profiler traces (TraceImportJob) and adds its row.
  std::optional<import::TraceImportResult> importTraceTrial(const import::TraceTrial& trial);
  QString errorString() const { return m_error; }

  QString path() const;
  QString sessionName() const;
  bool isForeign() const { return m_foreign; }
  bool hasSession() const { return bool(m_store); }
  store::SessionStore* store() const { return m_store.get(); }

  // ---- trials of the window ----
  void addQueuedTrial(const TrialRecord& record, const QString& source = QStringLiteral("live"));
  void beginLiveTrial(const QString& recordId);
  void addEvents(const EventBatch& batch);
  void finishLiveTrial(const TrialOutcome& outcome);
  // A queued trial dropped before it ran.
  void markStopped(const QString& recordId, const QString& reason);
  // Events the live writer has committed (they survive a crash of this process); -1 when none runs.
  qint64 liveCommitted() const;

  // ---- editing (false + errorString()) ----
  bool renameTrial(const QString& recordId, const QString& name);
  bool deleteTrial(const QString& recordId);
  bool annotateTrial(const QString& recordId, const QString& notes, const QStringList& tags);
  // Fills in (settings "key=value") or forgets settings of an imported trial (core/import).
  bool editKnownSettings(const QString& recordId, const QStringList& settings, const QStringList& forget = {});
  std::optional<store::TrialInfo> trialInfo(const QString& recordId) const;
  std::optional<store::LoadedTrial> loadTrial(const QString& recordId);
  qint64 storeId(const QString& recordId) const { return m_storeIds.value(recordId, -1); }

  // The next Run uses a config taken from a stored trial; from a foreign session it must be shown
  // (argv and environment) before anything runs. The window clears it after asking.
  // `source` is recorded with the trial that runs it ("duplicate of trial 3").
  void setPendingStoredConfig(bool fromStore, const QString& source = {}) {
    m_pendingStoredConfig = fromStore;
    m_pendingSource = source;
  }
  bool needsLaunchConfirmation() const { return m_pendingStoredConfig && m_foreign; }
  // The source to record for the trial about to be queued; clears the pending stored config.
  QString takeLaunchSource();

 signals:
  void sessionChanged();       // another file, or the same file renamed
  void trialCountChanged(int count);
  void storeFailed(const QString& message);  // a live write failed; the run itself goes on

 private:
  bool adopt(std::unique_ptr<store::SessionStore> store, bool foreign);
  void reload();
  bool fail(const std::exception& e);

  TrialsModel* m_model;
  std::unique_ptr<store::SessionStore> m_store;
  std::unique_ptr<store::TrialWriter> m_writer;
  std::unique_ptr<QTemporaryDir> m_scratch;
  QHash<QString, qint64> m_storeIds;
  QString m_liveId;
  QString m_error;
  QString m_pendingSource;
  bool m_foreign = false;
  bool m_pendingStoredConfig = false;
};

}  // namespace tunebench::ui
