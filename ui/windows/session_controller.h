// SessionController: the window's current session (.tbsession) and the trials table over it.
//
// The window always has one session. Trials queued in the window are added to it, a live run is
// written while it runs by a LiveRecorder on its own thread (a GUI killed mid-run leaves every
// committed step in the file, at most ~0.5 s lost; a full disk fails the recording, never the
// trial), and the end of a run sets the trial done/failed/stopped with its reason.
//
// Everything that reads or writes much of the file runs as a BackgroundJob with its own SQLite
// connection: opening (the file checks and PRAGMA quick_check, the trial list), loading a trial
// for the view or a comparison, importing a log or torch.profiler traces, exporting, Save As,
// deleting a trial. Their results arrive as signals; the GUI thread keeps one connection for
// single-row edits only (queue a trial, set a status, rename, notes and tags, an imported trial's
// known settings). A job's failure is BackgroundJobs::jobFailed with the job's kind (JobKind) and
// subject; a refusal at once is false with errorString(); either leaves the current session as it
// was. Nothing here shows a dialog.
//
// Other processes may write the same file at once (tunebench-cli run, another window; docs/
// STORE.md, "Several writers"): every second the GUI thread's connection asks SQLite whether any
// other connection committed (PRAGMA data_version), compares the trials' ids, statuses and names,
// and a background job reads the rows that another writer added, finished, renamed or deleted.
//
// Rows of the model are keyed by a QString id: live trials keep their run id (the --trial the
// workers stamp on events), trials loaded from a file get "s<store id>". storeId() maps back.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <variant>

#include <QHash>
#include <QSet>
#include <QObject>
#include <QStringList>
#include <QTemporaryDir>

#include "core/import/trace_import.h"
#include "core/store/event_log_import.h"
#include "core/store/export.h"
#include "core/store/records.h"
#include "core/report/report.h"
#include "ui/models/trial_record.h"
#include "ui/runner/runner_types.h"

class QThread;
class QTimer;

namespace tunebench::store {
class SessionStore;
}

namespace tunebench::ui {

class BackgroundJobs;
class JobProgress;
class LiveRecorder;
class TrialsModel;
struct TrialViewData;

// A stored trial as a row of the trials table. `steps`: the trial's hellos and step windows
// (SessionStore::trial_steps), from which the row's step time and throughput are
// analysis::trial_step_ms and analysis::trial_tokens_per_s, the figures of the live row, the
// comparison and the CLI (not a sum of the ranks' own summaries).
TrialRecord to_trial_record(const store::TrialInfo& info, const protocol::TrialLog& steps);

class SessionController : public QObject {
  Q_OBJECT
 public:
  // What an export writes: one of the store's data formats (core/store/export.h, the formats of
  // `tunebench-cli export`) or a report (core/report, `tunebench-cli report --html/--format`).
  using ExportFormat = std::variant<store::ExportFormat, report::ReportFormat>;

  SessionController(TrialsModel* model, BackgroundJobs* jobs, QObject* parent = nullptr);
  ~SessionController() override;  // a live trial still running is flushed and marked interrupted

  // ---- the session file ----
  // Creating an empty file is quick and synchronous (false + errorString() on failure).
  bool newSession(const QString& path, const QString& name = {});
  // A session in a temporary folder that lives as long as this controller (tests, --no-restore).
  bool newScratchSession();
  // Background jobs; the outcome is a signal (sessionChanged / openFailed, ...). `foreign`: the
  // file may come from someone else, so a config taken from it is shown before it runs.
  // Returns false (with errorString()) when the request is refused at once (a trial records).
  bool openSession(const QString& path, bool foreign = true);
  bool saveAs(const QString& path);
  // A Tunebench HTML report: its trials become a new session at `sessionPath` (created; removed
  // again when the report is refused), which is then opened as from someone else.
  bool openReport(const QString& htmlPath, const QString& sessionPath);
  // A compact copy of the session at `source` is written to `copyPath` (which must not exist) and
  // opened as from someone else; the source is only read, through SQLite (an example shipped in a
  // read-only folder, or a file another process writes at this moment).
  bool openCopy(const QString& source, const QString& copyPath);
  bool importLog(const QString& jsonlPath, const QString& name = {});
  // The trials a Tunebench HTML report carries, into this session (one transaction): imported.
  bool importReport(const QString& htmlPath);
  // One run's torch.profiler traces (one file per rank) as one trial: read with progress in bytes
  // (BackgroundJobs::cancel stops the read at its next chunk), then written in one transaction,
  // so a failure or a cancel adds nothing. `settings`: "key=value" known settings. Returns the
  // job's id (tracesImported, or the job's failure or cancel, follows); 0 without a session.
  int importTraceTrial(const QStringList& tracePaths, const QString& name = {}, const QStringList& settings = {});
  bool exportTrials(const QStringList& recordIds, const QString& path, ExportFormat format);
  bool deleteTrial(const QString& recordId);
  // Loads a stored trial for the view (superseding an earlier request): trialLoaded.
  void loadTrialForView(const QString& recordId);
  // Loads stored trials for a comparison; `done` gets the logs in the order asked (GUI thread).
  void loadTrialLogs(const QStringList& recordIds,
                     std::function<void(std::vector<std::optional<protocol::TrialLog>>)> done);

  QString errorString() const { return m_error; }
  QString path() const { return m_path; }
  QString sessionName() const { return m_name; }
  bool isForeign() const { return m_foreign; }
  // A trial that was in someone else's file when it was opened: its config is shown before it runs
  // again. Trials run here since (this window's, or another program's) are the user's own.
  bool isForeignTrial(const QString& recordId) const { return m_foreign && m_foreignIds.contains(storeId(recordId)); }
  bool hasSession() const { return bool(m_store); }
  bool isRecording() const { return m_recording; }
  // The throw-away session of a window started without one (tests, --no-restore).
  bool isScratch() const { return m_scratch && m_path.startsWith(m_scratch->path()); }
  BackgroundJobs* jobs() const { return m_jobs; }

  // ---- trials of the window (single-row writes on the GUI thread's connection) ----
  void addQueuedTrial(const TrialRecord& record, const QString& source = QStringLiteral("live"));
  void beginLiveTrial(const QString& recordId);
  void addEvents(const EventBatch& batch);
  // Asks the recorder to finish; liveTrialStored follows once the status is in the file.
  void finishLiveTrial(const TrialOutcome& outcome);
  // A queued trial dropped before it ran.
  void markStopped(const QString& recordId, const QString& reason);
  // Events the live recorder has committed (they survive a crash of this process); -1 when none runs.
  qint64 liveCommitted() const;

  bool renameTrial(const QString& recordId, const QString& name);
  bool annotateTrial(const QString& recordId, const QString& notes, const QStringList& tags);
  // Fills in ("key=value") or forgets known settings of an imported trial (core/import): validated,
  // written in one transaction or not at all (false + errorString() listing the problems).
  bool editKnownSettings(const QString& recordId, const QStringList& settings, const QStringList& forget = {});
  // Metadata straight from the file (tests; the window reads its TrialRecords).
  std::optional<store::TrialInfo> trialInfo(const QString& recordId) const;
  // Loads a trial on the calling thread. Tests and tools only: the window uses the jobs.
  std::optional<store::LoadedTrial> loadTrial(const QString& recordId);
  // The names of the session's trials (the table's rows), for names that must be new.
  QStringList trialNames() const;
  qint64 storeId(const QString& recordId) const { return m_storeIds.value(recordId, -1); }
  // Looks for trials another process (or another connection of this one) changed in the file, now
  // instead of at the next tick; rows it finds arrive through a background job.
  void lookForOtherWriters();
  QString recordIdOf(qint64 storeId) const { return m_storeIds.key(storeId); }

 signals:
  void sessionChanged();  // another file, or the same file renamed
  void trialCountChanged(int count);
  void openFailed(const QString& path, const QString& message);
  void savedAs(const QString& path);
  void imported(const QString& jsonlPath, const tunebench::store::ImportResult& result, const QString& recordId);
  void tracesImported(const QStringList& tracePaths, const tunebench::import::TraceImportResult& result,
                      const QString& recordId);
  void exported(const QString& path, int trials);
  void trialLoaded(const QString& recordId, std::shared_ptr<tunebench::ui::TrialViewData> data);
  void storeFailed(const QString& message);  // a live write failed; the run itself goes on
  void storeRecovered();
  // The live trial's end is in the file (or could not be written: storeFailed said why).
  void liveTrialStored(const tunebench::ui::TrialOutcome& outcome);

 private:
  bool adopt(const QString& path, const QString& name, bool foreign, std::vector<std::pair<TrialRecord, qint64>> rows);
  bool refuseWhileRecording(const QString& what);
  bool fail(const std::exception& e);
  QString trialName(const QString& recordId) const;  // "trial \"7B DDP\"", for failures
  void onRecorderFinished(qint64 trialId, bool ok, qint64 lost, const QString& message);
  void readChangedTrials(std::vector<qint64> ids, QStringList gone);

  TrialsModel* m_model;
  BackgroundJobs* m_jobs;
  std::unique_ptr<store::SessionStore> m_store;  // the GUI thread's connection: small writes only
  std::unique_ptr<QTemporaryDir> m_scratch;
  QThread* m_recorderThread = nullptr;
  LiveRecorder* m_recorder = nullptr;  // lives on m_recorderThread
  QHash<QString, qint64> m_storeIds;
  QSet<qint64> m_foreignIds;  // the trials a foreign file held when it was opened
  QTimer* m_watch = nullptr;  // lookForOtherWriters, while a session is open
  qint64 m_dataVersion = -1;
  std::vector<store::TrialHead> m_heads;  // the file's trials as last compared
  std::map<qint64, TrialOutcome> m_finishing;  // store id -> outcome waiting for the recorder
  QString m_path;
  QString m_name;
  QString m_liveId;
  QString m_error;
  bool m_foreign = false;
  bool m_recording = false;
};

}  // namespace tunebench::ui

Q_DECLARE_METATYPE(tunebench::store::ImportResult)
Q_DECLARE_METATYPE(tunebench::import::TraceImportResult)
