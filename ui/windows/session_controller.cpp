#include "ui/windows/session_controller.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <utility>

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include "core/analysis/step_time.h"
#include "core/analysis/throughput.h"
#include "core/config/known_settings.h"
#include "core/config/trial_config.h"
#include "core/report/embedded_session.h"
#include "core/report/export.h"
#include "core/report/report.h"
#include "core/store/export.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "ui/models/trial_log_events.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/live_recorder.h"
#include "ui/windows/trial_view_data.h"

namespace tunebench::ui {

namespace {
QString loaded_id(qint64 storeId) { return QStringLiteral("s%1").arg(storeId); }

QString data_size(qint64 bytes) { return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat); }

// How often the window looks for another process's writes to its session.
constexpr int kWatchIntervalMs = 1000;

// Writers wait this long for another connection's transaction (an import, the live recorder)
// before they give up with "database is locked".
constexpr std::chrono::milliseconds kBusyTimeout{2000};

// The job thread's connections to the current file, reused across jobs (opening runs the file
// checks). Only the one job thread ever touches them.
struct JobStores {
  std::string path;
  std::unique_ptr<store::SessionStore> stores[2];  // read-only, read-write
  static JobStores& of_this_thread() {
    thread_local JobStores stores;
    return stores;
  }
};

store::SessionStore& job_store(const std::string& path, bool writable) {
  JobStores& cache = JobStores::of_this_thread();
  if (cache.path != path) {
    for (auto& s : cache.stores) s.reset();
    cache.path = path;
  }
  auto& slot = cache.stores[writable ? 1 : 0];
  if (!slot) {
    store::SessionStore::OpenOptions options;
    options.mode = writable ? store::SessionStore::Mode::ReadWrite : store::SessionStore::Mode::ReadOnly;
    options.check_integrity = false;  // checked when the session was opened
    options.busy_timeout = kBusyTimeout;
    slot = std::make_unique<store::SessionStore>(store::SessionStore::open(path, options));
  }
  return *slot;
}

// Opening a session (maybe the same path, replaced on disk) starts from fresh connections.
void forget_job_stores() {
  JobStores& cache = JobStores::of_this_thread();
  for (auto& s : cache.stores) s.reset();
  cache.path.clear();
}

TrialRecord record_of(const store::SessionStore& s, const store::TrialInfo& info) {
  return to_trial_record(info, info.step_count > 0 ? s.trial_steps(info.id) : protocol::TrialLog{});
}

QString view_title(const store::LoadedTrial& t) {
  // The ranks stored, "1 of 2 ranks" when a trace import left some out.
  const int stored = int(t.log.ranks.size()), world = std::max(stored, t.log.world_size());
  const QString ranks = ranks_held(stored, world) + (stored < world ? QStringLiteral(" ranks") : QStringLiteral(" rank(s)"));
  return QStringLiteral("%1 — %2, %3, %4 steps")
      .arg(QString::fromStdString(t.info.name), QString::fromUtf8(protocol::to_string(t.info.status).data()), ranks)
      .arg(qlonglong(t.log.steps_per_rank()));
}
}  // namespace

TrialRecord to_trial_record(const store::TrialInfo& info, const protocol::TrialLog& steps) {
  TrialRecord r;
  r.id = loaded_id(info.id);
  // A config a newer or older Tunebench wrote may carry unknown knobs: keep what parses.
  r.config = config::from_json(info.config).config;
  r.config.name = info.name;
  // Imported traces know few knobs (config/known_settings.h): the table must not show a default.
  if (!config::is_known(info.config, "model")) r.config.model = "unknown";
  r.strategy_known = config::is_known(info.config, "strategy");
  r.status = info.status;
  r.reason = QString::fromStdString(info.exit_reason);
  if (info.status == protocol::TrialStatus::Interrupted && r.reason.isEmpty())
    r.reason = QStringLiteral("interrupted: its writer went away (crash or kill) before the trial ended");
  if (info.start_us) r.started = QDateTime::fromMSecsSinceEpoch(*info.start_us / 1000);
  r.steps = int(r.config.steps);
  // Per rank as everywhere (protocol::TrialLog::steps_per_rank): not records / world size, which
  // reads 2 for a 4-step trace of which one of two ranks was imported.
  r.step = int(steps.steps_per_rank());
  // The ranks stored, of the run's world, as the trial view's title counts them (view_title).
  if (!steps.ranks.empty()) {
    r.ranks_stored = int(steps.ranks.size());
    r.ranks_world = std::max(r.ranks_stored, steps.world_size());
  }
  r.notes = QString::fromStdString(info.notes);
  for (const std::string& t : info.tags) r.tags << QString::fromStdString(t);
  r.source = QString::fromStdString(info.source);
  // The analysis' figures, as the live row and the comparison show them: not rank 0's own median,
  // nor a sum of each rank's own throughput.
  const analysis::Spread step = analysis::trial_step_ms(steps);
  if (!step.empty()) r.step_ms_median = step.median;
  if (const analysis::Spread rate = analysis::trial_tokens_per_s(steps); !rate.empty()) r.tokens_per_s = rate.median;
  else if (const analysis::Spread samples = analysis::trial_samples_per_s(steps); !samples.empty())
    r.samples_per_s = samples.median;
  return r;
}

SessionController::SessionController(TrialsModel* model, BackgroundJobs* jobs, QObject* parent)
    : QObject(parent), m_model(model), m_jobs(jobs), m_recorderThread(new QThread(this)), m_recorder(new LiveRecorder) {
  qRegisterMetaType<store::ImportResult>();
  qRegisterMetaType<import::TraceImportResult>();
  m_recorderThread->setObjectName(QStringLiteral("tunebench-recorder"));
  m_recorder->moveToThread(m_recorderThread);
  connect(m_recorderThread, &QThread::finished, m_recorder, &QObject::deleteLater);
  connect(m_recorder, &LiveRecorder::writeFailed, this, &SessionController::storeFailed);
  connect(m_recorder, &LiveRecorder::writeRecovered, this, &SessionController::storeRecovered);
  connect(m_recorder, &LiveRecorder::finished, this, &SessionController::onRecorderFinished);
  m_recorderThread->start();
  m_watch = new QTimer(this);
  m_watch->setInterval(kWatchIntervalMs);
  connect(m_watch, &QTimer::timeout, this, &SessionController::lookForOtherWriters);
}

SessionController::~SessionController() {
  // The recorder finishes its queued work (an unfinished trial is marked interrupted by its
  // writer's destructor), then its thread ends.
  QMetaObject::invokeMethod(
      m_recorder, [r = m_recorder] { r->close(); }, Qt::BlockingQueuedConnection);
  m_recorderThread->quit();
  m_recorderThread->wait();
}

bool SessionController::fail(const std::exception& e) {
  m_error = QString::fromStdString(e.what());
  return false;
}

bool SessionController::refuseWhileRecording(const QString& what) {
  if (!m_recording) return false;
  m_error = QStringLiteral("A trial is being recorded into the current session; stop it before you %1.").arg(what);
  return true;
}

bool SessionController::newSession(const QString& path, const QString& name) {
  if (refuseWhileRecording(QStringLiteral("switch sessions"))) return false;
  try {
    const QString n = name.isEmpty() ? QFileInfo(path).completeBaseName() : name;
    store::SessionStore::create(path.toStdString(), n.toStdString());  // an empty session: quick
    return adopt(path, n, false, {});
  } catch (const std::exception& e) {
    return fail(e);
  }
}

bool SessionController::newScratchSession() {
  auto dir = std::make_unique<QTemporaryDir>();
  if (!dir->isValid()) {
    m_error = QStringLiteral("Could not create a temporary folder for the session: %1").arg(dir->errorString());
    return false;
  }
  const QString path = dir->filePath(QStringLiteral("scratch.tbsession"));
  // The old folder goes only after the new session replaced the one it holds; the new one is
  // known as scratch while listeners hear of it.
  std::unique_ptr<QTemporaryDir> old = std::exchange(m_scratch, std::move(dir));
  if (!newSession(path, QStringLiteral("scratch"))) {
    m_scratch = std::move(old);
    return false;
  }
  return true;
}

bool SessionController::openSession(const QString& path, bool foreign) {
  if (refuseWhileRecording(QStringLiteral("switch sessions"))) return false;
  const std::string file = path.toStdString();
  m_jobs->submit(QStringLiteral("Opening %1").arg(QFileInfo(path).fileName()),
                 [this, path, file, foreign](JobProgress& progress) {
                   // The checks read the whole file (PRAGMA quick_check): a 100 MB session takes a while, and a
                   // corrupt or foreign file throws here, before the current session is touched.
                   progress.report(0, 0, QStringLiteral("checking the file"));
                   forget_job_stores();
                   const store::SessionStore opened = store::SessionStore::open(file);
                   const QString name = QString::fromStdString(opened.info().name);
                   const std::vector<store::TrialInfo> trials = opened.list_trials();
                   std::vector<std::pair<TrialRecord, qint64>> rows;
                   for (size_t i = 0; i < trials.size(); ++i) {
                     progress.report(qint64(i), qint64(trials.size()),
                                     QStringLiteral("reading trial %1 of %2").arg(i + 1).arg(trials.size()));
                     rows.emplace_back(record_of(opened, trials[i]), trials[i].id);
                   }
                   return [this, path, name, foreign, rows = std::move(rows)]() mutable {
                     if (!adopt(path, name, foreign, std::move(rows))) emit openFailed(path, m_error);
                   };
                 },
                 {}, {JobKind::OpenSession, QFileInfo(path).fileName()});
  return true;
}

bool SessionController::adopt(const QString& path, const QString& name, bool foreign,
                              std::vector<std::pair<TrialRecord, qint64>> rows) {
  if (refuseWhileRecording(QStringLiteral("switch sessions"))) return false;
  try {
    // The file was checked (or just created): the GUI thread's connection skips quick_check.
    store::SessionStore::OpenOptions options;
    options.check_integrity = false;
    options.busy_timeout = kBusyTimeout;
    m_store = std::make_unique<store::SessionStore>(store::SessionStore::open(path.toStdString(), options));
  } catch (const std::exception& e) {
    return fail(e);
  }
  m_path = path;
  m_name = name;
  m_foreign = foreign;
  m_error.clear();
  // Listeners wait for these ends; the file they belong to is no longer ours to update.
  for (const auto& [id, outcome] : std::exchange(m_finishing, {})) emit liveTrialStored(outcome);
  m_model->clear();
  m_storeIds.clear();
  m_foreignIds.clear();
  for (auto& [record, id] : rows) {
    m_storeIds.insert(record.id, id);
    m_model->upsert(record);
    if (foreign) m_foreignIds.insert(id);
  }
  m_dataVersion = -1;
  m_heads.clear();
  lookForOtherWriters();  // the file's state now is the one compared against
  m_watch->start();
  emit sessionChanged();
  emit trialCountChanged(m_model->rowCount());
  return true;
}

bool SessionController::saveAs(const QString& path) {
  if (!m_store) return false;
  const std::string from = m_path.toStdString(), to = path.toStdString();
  const bool foreign = m_foreign;
  m_jobs->submit(QStringLiteral("Saving %1").arg(QFileInfo(path).fileName()),
                 [this, from, to, path, foreign](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("writing a compact copy"));
                   job_store(from, false).save_as(to);
                   return [this, path, foreign] {
                     emit savedAs(path);
                     // Continue in the copy, as Save As does everywhere. A copy of someone else's
                     // session still holds their configs: it stays foreign; a copy of the user's own
                     // is theirs. While a trial records, it keeps recording where it started; the
                     // copy is a snapshot.
                     if (!m_recording) openSession(path, foreign);
                   };
                 },
                 {}, {JobKind::SaveSession, QFileInfo(path).fileName()});
  return true;
}

bool SessionController::openReport(const QString& htmlPath, const QString& sessionPath) {
  if (refuseWhileRecording(QStringLiteral("switch sessions"))) return false;
  const std::string html = htmlPath.toStdString(), file = sessionPath.toStdString();
  const std::string name = QFileInfo(htmlPath).completeBaseName().toStdString();
  m_jobs->submit(QStringLiteral("Opening %1").arg(QFileInfo(htmlPath).fileName()),
                 [this, html, file, name, sessionPath](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("reading the trials the report carries"));
                   try {
                     auto created = store::SessionStore::create(file, name);
                     report::import_report(created, html);
                   } catch (...) {
                     for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((file + suffix).c_str());
                     throw;
                   }
                   return [this, sessionPath] { openSession(sessionPath, true); };
                 });
  return true;
}

bool SessionController::openCopy(const QString& source, const QString& copyPath) {
  if (refuseWhileRecording(QStringLiteral("switch sessions"))) return false;
  const std::string from = source.toStdString(), to = copyPath.toStdString();
  m_jobs->submit(QStringLiteral("Opening a copy of %1").arg(QFileInfo(source).fileName()),
                 [this, from, to, copyPath](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("checking the file and writing a copy"));
                   store::SessionStore::open(from, {store::SessionStore::Mode::ReadOnly}).save_as(to);
                   return [this, copyPath] { openSession(copyPath, true); };
                 },
                 {}, {JobKind::OpenSession, QFileInfo(source).fileName()});
  return true;
}

bool SessionController::importReport(const QString& htmlPath) {
  if (!m_store) return false;
  const std::string file = m_path.toStdString(), html = htmlPath.toStdString();
  const QString session = m_path;
  m_jobs->submit(QStringLiteral("Importing %1").arg(QFileInfo(htmlPath).fileName()),
                 [this, file, html, htmlPath, session](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("reading the trials the report carries"));
                   store::SessionStore& s = job_store(file, true);
                   const store::ImportResult result = report::import_report(s, html);
                   std::vector<std::pair<TrialRecord, qint64>> rows;
                   for (const int64_t id : result.trial_ids) rows.emplace_back(record_of(s, s.trial(id)), id);
                   return [this, result, rows, htmlPath, session] {
                     if (session != m_path) return;  // another session was opened meanwhile
                     for (const auto& [record, id] : rows) {
                       m_storeIds.insert(record.id, id);
                       m_model->upsert(record);
                     }
                     emit trialCountChanged(m_model->rowCount());
                     emit imported(htmlPath, result, rows.empty() ? QString() : rows.front().first.id);
                   };
                 });
  return true;
}

bool SessionController::importLog(const QString& jsonlPath, const QString& name) {
  if (!m_store) return false;
  const std::string file = m_path.toStdString(), log = jsonlPath.toStdString(), trialName = name.toStdString();
  const QString session = m_path;
  m_jobs->submit(QStringLiteral("Importing %1").arg(QFileInfo(jsonlPath).fileName()),
                 [this, file, log, trialName, jsonlPath, session](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("reading and storing the events"));
                   store::SessionStore& s = job_store(file, true);
                   const store::ImportResult result = store::import_event_log(s, log, trialName);
                   const TrialRecord record = record_of(s, s.trial(result.trial_id));
                   return [this, result, record, jsonlPath, session] {
                     if (session != m_path) return;  // another session was opened meanwhile
                     m_storeIds.insert(record.id, result.trial_id);
                     m_model->upsert(record);
                     emit trialCountChanged(m_model->rowCount());
                     emit imported(jsonlPath, result, record.id);
                   };
                 },
                 {}, {JobKind::ImportLog, QFileInfo(jsonlPath).fileName()});
  return true;
}

int SessionController::importTraceTrial(const QStringList& tracePaths, const QString& name,
                                        const QStringList& settings) {
  if (!m_store || tracePaths.isEmpty()) return 0;
  const std::string file = m_path.toStdString();
  const QString session = m_path;
  std::vector<std::string> paths;
  for (const QString& p : tracePaths) paths.push_back(p.toStdString());
  import::TraceImportOptions options;
  options.name = name.toStdString();
  for (const QString& s : settings) options.settings.push_back(s.toStdString());
  const QString trial = name.isEmpty() ? QString::fromStdString(import::default_trial_name(paths.front(), int(paths.size()))) : name;
  const QString subject = QStringLiteral("%1 (%2 torch.profiler trace%3)")
                              .arg(trial)
                              .arg(tracePaths.size())
                              .arg(tracePaths.size() == 1 ? QString() : QStringLiteral("s"));
  const JobLabel label{JobKind::ImportTraces, subject};
  return m_jobs->submit(
      QStringLiteral("Importing %1").arg(subject),
      [this, file, paths, options, tracePaths, session](JobProgress& progress) mutable {
        const qsizetype n = tracePaths.size();
        options.progress = [&progress, n](int64_t done, int64_t total) {
          progress.report(
              done, total,
              QStringLiteral("reading %1 trace(s): %2 of %3").arg(n).arg(data_size(done), data_size(total)));
          return !progress.cancelled();
        };
        const import::TraceTrial read = import::read_trace_trial(paths, options);
        // The last moment a cancel can take effect: past here the trial is written (or not at all).
        if (progress.cancelled()) return std::function<void()>();
        progress.report(0, 0, QStringLiteral("writing the trial"));
        store::SessionStore& s = job_store(file, true);
        const import::TraceImportResult result = import::store_trace_trial(s, read);
        const TrialRecord record = record_of(s, s.trial(result.trial_id));
        return std::function<void()>([this, result, record, tracePaths, session] {
          if (session != m_path) return;  // another session was opened meanwhile
          m_storeIds.insert(record.id, result.trial_id);
          m_model->upsert(record);
          emit trialCountChanged(m_model->rowCount());
          emit tracesImported(tracePaths, result, record.id);
        });
      },
      {}, label);
}

bool SessionController::exportTrials(const QStringList& recordIds, const QString& path, ExportFormat format) {
  std::vector<int64_t> ids;  // store ids, in the order selected
  for (const QString& r : recordIds)
    if (storeId(r) >= 0 && m_model->find(r)) ids.push_back(storeId(r));
  if (!m_store || ids.empty()) {
    m_error = QStringLiteral("None of the selected trials is in the session (a replay is not stored).");
    return false;
  }
  const std::string file = m_path.toStdString(), out = path.toStdString();
  m_jobs->submit(QStringLiteral("Exporting to %1").arg(QFileInfo(path).fileName()),
                 [this, ids, file, out, path, format](JobProgress& progress) {
                   store::SessionStore& s = job_store(file, false);
                   std::vector<store::LoadedTrial> trials;
                   for (size_t i = 0; i < ids.size(); ++i) {
                     progress.report(qint64(i), qint64(ids.size()),
                                     QStringLiteral("loading trial %1 of %2").arg(i + 1).arg(ids.size()));
                     trials.push_back(s.load_trial(ids[i]));
                   }
                   progress.report(qint64(ids.size()), qint64(ids.size()), QStringLiteral("writing"));
                   std::ofstream stream(out, std::ios::binary | std::ios::trunc);
                   if (!stream) throw store::StoreError("could not write " + out);
                   if (const auto* data = std::get_if<store::ExportFormat>(&format))
                     report::export_trials(trials, *data, stream);  // the CLI's writer, UTF-8 repaired
                   else
                     report::write_report(trials, std::get<report::ReportFormat>(format), stream);
                   stream.close();
                   if (!stream) throw store::StoreError("could not write " + out);
                   const int n = int(trials.size());
                   return [this, path, n] { emit exported(path, n); };
                 },
                 {}, {JobKind::Export, QFileInfo(path).fileName()});
  return true;
}

bool SessionController::deleteTrial(const QString& recordId) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return false;
  if (recordId == m_liveId) {
    m_error = QStringLiteral("The trial is running; stop it before deleting it.");
    return false;
  }
  const std::string file = m_path.toStdString();
  const QString session = m_path;
  m_jobs->submit(QStringLiteral("Deleting a trial"),
                 [this, file, id, recordId, session](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("removing its records"));
                   job_store(file, true).delete_trial(id);
                   return [this, recordId, session] {
                     if (session != m_path) return;
                     m_storeIds.remove(recordId);
                     m_model->removeTrial(recordId);
                     emit trialCountChanged(m_model->rowCount());
                   };
                 },
                 {}, {JobKind::DeleteTrial, trialName(recordId)});
  return true;
}

void SessionController::loadTrialForView(const QString& recordId) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return;
  const std::string file = m_path.toStdString();
  m_jobs->submit(QStringLiteral("Loading a trial"),
                 [this, file, id, recordId](JobProgress& progress) {
                   progress.report(0, 0, QStringLiteral("reading its steps"));
                   const store::LoadedTrial trial = job_store(file, false).load_trial(id);
                   if (progress.cancelled()) return std::function<void()>();
                   progress.report(0, 0, QStringLiteral("preparing the plots"));
                   auto data = std::make_shared<TrialViewData>();
                   data->recordId = recordId;
                   data->title = view_title(trial);
                   data->events = trial_log_events(trial.log);
                   data->timeline.add(data->events);
                   return std::function<void()>([this, recordId, data] { emit trialLoaded(recordId, data); });
                 },
                 QStringLiteral("view"), {JobKind::LoadTrial, trialName(recordId)});
}

void SessionController::loadTrialLogs(const QStringList& recordIds,
                                      std::function<void(std::vector<std::optional<protocol::TrialLog>>)> done) {
  std::vector<qint64> ids;
  for (const QString& r : recordIds) ids.push_back(storeId(r));
  const std::string file = m_path.toStdString();
  m_jobs->submit(QStringLiteral("Loading %1 trial(s)").arg(ids.size()),
                 [file, ids, done](JobProgress& progress) {
                   // `done` is always called, with nullopt for a trial that could not be loaded: its caller
                   // (a comparison, the predictions' evidence) goes on with the others. The first failure
                   // is then reported as the job's (kind LoadTrial).
                   auto logs = std::make_shared<std::vector<std::optional<protocol::TrialLog>>>(ids.size());
                   std::string failure;
                   try {
                     store::SessionStore& s = job_store(file, false);
                     for (size_t i = 0; i < ids.size(); ++i) {
                       progress.report(qint64(i), qint64(ids.size()),
                                       QStringLiteral("trial %1 of %2").arg(i + 1).arg(ids.size()));
                       if (ids[i] < 0) continue;
                       try {
                         (*logs)[i] = s.load_trial(ids[i]).log;
                       } catch (const std::exception& e) {
                         if (failure.empty()) failure = e.what();
                       }
                     }
                   } catch (const std::exception& e) {
                     failure = e.what();
                   }
                   return [done, logs, failure] {
                     done(std::move(*logs));
                     if (!failure.empty()) throw store::StoreError(failure);  // BackgroundJobs: jobFailed
                   };
                 },
                 {},
                 {JobKind::LoadTrial,
                  ids.size() == 1 ? trialName(recordIds.front()) : QStringLiteral("one of %1 trials").arg(ids.size())});
}

void SessionController::lookForOtherWriters() {
  if (!m_store) return;
  std::vector<store::TrialHead> heads;
  try {
    const qint64 version = m_store->data_version();
    if (version == m_dataVersion) return;
    m_dataVersion = version;
    heads = m_store->trial_heads();
  } catch (const std::exception&) {
    return;  // busy or gone for a moment: the next tick asks again
  }
  if (heads == m_heads) return;  // this window's own live steps, or another trial's steps only
  m_heads = heads;
  // Rows this window runs are its runner's to update; rows read from the file follow the file.
  std::vector<qint64> changed;
  std::set<qint64> inFile;
  for (const store::TrialHead& h : heads) {
    inFile.insert(h.id);
    const QString recordId = recordIdOf(h.id);
    if (recordId.isEmpty()) {
      changed.push_back(h.id);
    } else if (recordId == loaded_id(h.id)) {
      const TrialRecord* r = m_model->find(recordId);
      if (!r || r->status != h.status || r->config.name != h.name || h.status == protocol::TrialStatus::Running)
        changed.push_back(h.id);
    }
  }
  QStringList gone;
  for (auto it = m_storeIds.cbegin(); it != m_storeIds.cend(); ++it)
    if (it.key() == loaded_id(it.value()) && !inFile.count(it.value())) gone << it.key();
  if (!changed.empty() || !gone.isEmpty()) readChangedTrials(std::move(changed), gone);
}

void SessionController::readChangedTrials(std::vector<qint64> ids, QStringList gone) {
  const std::string file = m_path.toStdString();
  const QString session = m_path;
  m_jobs->submit(
      QStringLiteral("Reading trials another program wrote"),
      [this, file, ids, gone, session](JobProgress& progress) {
        progress.report(0, qint64(ids.size()), QStringLiteral("reading %1 trial(s)").arg(ids.size()));
        std::vector<std::pair<TrialRecord, qint64>> rows;
        store::SessionStore& s = job_store(file, false);
        for (const qint64 id : ids) {
          try {
            rows.emplace_back(record_of(s, s.trial(id)), id);
          } catch (const store::StoreError&) {
            // Deleted again meanwhile: the next comparison removes its row.
          }
        }
        return [this, rows, gone, session] {
          if (session != m_path) return;
          for (const QString& recordId : gone)
            if (m_storeIds.contains(recordId)) {
              m_storeIds.remove(recordId);
              m_model->removeTrial(recordId);
            }
          for (const auto& [record, id] : rows) {
            const QString mine = recordIdOf(id);
            if (!mine.isEmpty() && mine != record.id) continue;  // queued here meanwhile
            m_storeIds.insert(record.id, id);
            m_model->upsert(record);
          }
          emit trialCountChanged(m_model->rowCount());
        };
      },
      QStringLiteral("other-writers"));
}

QString SessionController::trialName(const QString& recordId) const {
  const TrialRecord* r = m_model->find(recordId);
  return r && !r->config.name.empty() ? QStringLiteral("trial \"%1\"").arg(QString::fromStdString(r->config.name))
                                      : QStringLiteral("trial %1").arg(recordId);
}

void SessionController::addQueuedTrial(const TrialRecord& record, const QString& source) {
  if (!m_store) return;
  try {
    const qint64 id =
        m_store->add_trial(record.config.name.empty() ? record.id.toStdString() : record.config.name,
                           config::recorded_json(record.config), protocol::TrialStatus::Queued,
                           source.toStdString());
    m_storeIds.insert(record.id, id);
  } catch (const std::exception& e) {
    fail(e);
    emit storeFailed(m_error);
  }
  emit trialCountChanged(m_model->rowCount());
}

void SessionController::beginLiveTrial(const QString& recordId) {
  m_liveId = recordId;
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return;
  m_recording = true;
  QMetaObject::invokeMethod(
      m_recorder, [r = m_recorder, path = m_path, id] { r->begin(path, id); }, Qt::QueuedConnection);
}

void SessionController::addEvents(const EventBatch& batch) {
  if (!m_recording) return;
  QMetaObject::invokeMethod(
      m_recorder, [r = m_recorder, batch] { r->add(batch); }, Qt::QueuedConnection);
}

qint64 SessionController::liveCommitted() const { return m_recording ? m_recorder->committed() : -1; }

void SessionController::finishLiveTrial(const TrialOutcome& outcome) {
  const QString recordId = outcome.trial_id.isEmpty() ? m_liveId : outcome.trial_id;
  const qint64 id = storeId(recordId);
  m_liveId.clear();
  if (m_recording && id >= 0) {
    m_recording = false;
    m_finishing[id] = outcome;
    const int status = int(outcome.status);
    QMetaObject::invokeMethod(
        m_recorder, [r = m_recorder, status, reason = outcome.reason] { r->finish(status, reason); },
        Qt::QueuedConnection);
    return;
  }
  m_recording = false;
  if (m_store && id >= 0) {
    try {
      m_store->set_trial_status(id, outcome.status, outcome.reason.toStdString());  // it never started
    } catch (const std::exception& e) {
      fail(e);
      emit storeFailed(m_error);
    }
  }
  emit liveTrialStored(outcome);
}

void SessionController::onRecorderFinished(qint64 trialId, bool ok, qint64 lost, const QString& message) {
  auto it = m_finishing.find(trialId);
  if (it == m_finishing.end()) return;  // a recorder reset (another session), nobody waits
  const TrialOutcome outcome = it->second;
  m_finishing.erase(it);
  if (!ok && m_store) {
    // The recorder's connection could not finish the trial: say so through ours, so the file does
    // not keep a trial "running" that ended.
    QString reason = outcome.reason;
    const QString note = QStringLiteral("%1 event(s) were not recorded: %2").arg(lost).arg(message);
    reason = reason.isEmpty() ? note : reason + QStringLiteral(" (") + note + QLatin1Char(')');
    try {
      m_store->set_trial_status(trialId, outcome.status, reason.toStdString());
    } catch (const std::exception& e) {
      fail(e);
    }
    emit storeFailed(QStringLiteral("trial %1 ended, but %2").arg(outcome.trial_id, note));
  }
  emit liveTrialStored(outcome);
}

void SessionController::markStopped(const QString& recordId, const QString& reason) {
  if (!m_store || storeId(recordId) < 0) return;
  try {
    m_store->set_trial_status(storeId(recordId), protocol::TrialStatus::Stopped, reason.toStdString());
  } catch (const std::exception& e) {
    fail(e);
  }
}

QStringList SessionController::trialNames() const {
  QStringList names;
  for (int row = 0; row < m_model->rowCount(); ++row) names << QString::fromStdString(m_model->record(row).config.name);
  return names;
}

bool SessionController::renameTrial(const QString& recordId, const QString& name) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return false;
  try {
    m_store->rename_trial(id, name.toStdString());
  } catch (const std::exception& e) {
    return fail(e);
  }
  if (TrialRecord* r = m_model->find(recordId)) {
    r->config.name = name.toStdString();
    m_model->touch(recordId);
  }
  return true;
}

bool SessionController::annotateTrial(const QString& recordId, const QString& notes, const QStringList& tags) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return false;
  std::vector<std::string> tagList;
  QStringList shown;
  for (const QString& t : tags)
    if (!t.trimmed().isEmpty()) {
      tagList.push_back(t.trimmed().toStdString());
      shown << t.trimmed();
    }
  try {
    m_store->set_trial_notes(id, notes.toStdString());
    m_store->set_trial_tags(id, tagList);
  } catch (const std::exception& e) {
    return fail(e);
  }
  if (TrialRecord* r = m_model->find(recordId)) {
    shown.sort();
    r->notes = notes;
    r->tags = shown;
    m_model->touch(recordId);
  }
  return true;
}

bool SessionController::editKnownSettings(const QString& recordId, const QStringList& settings,
                                          const QStringList& forget) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) {
    m_error = QStringLiteral("This trial is not stored in the session.");
    return false;
  }
  std::vector<std::string> set, drop;
  for (const QString& s : settings) set.push_back(s.toStdString());
  for (const QString& k : forget) drop.push_back(k.toStdString());
  try {
    import::edit_known_settings(*m_store, id, set, drop);  // one row of trials and its ranks' rows
    m_model->upsert(record_of(*m_store, m_store->trial(id)));
  } catch (const std::exception& e) {
    return fail(e);
  }
  return true;
}

std::optional<store::TrialInfo> SessionController::trialInfo(const QString& recordId) const {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return std::nullopt;
  try {
    return m_store->trial(id);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<store::LoadedTrial> SessionController::loadTrial(const QString& recordId) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return std::nullopt;
  try {
    return m_store->load_trial(id);
  } catch (const std::exception& e) {
    fail(e);
    return std::nullopt;
  }
}

}  // namespace tunebench::ui
