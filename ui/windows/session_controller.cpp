#include "ui/windows/session_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

#include "core/config/known_settings.h"
#include "core/config/trial_config.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "ui/models/trials_model.h"

namespace tunebench::ui {

namespace {
QString loaded_id(qint64 storeId) { return QStringLiteral("s%1").arg(storeId); }

store::TrialStatus to_store_status(TrialOutcome::Status status) {
  switch (status) {
    case TrialOutcome::Status::Succeeded: return store::TrialStatus::Done;
    case TrialOutcome::Status::Failed: return store::TrialStatus::Failed;
    case TrialOutcome::Status::Stopped: return store::TrialStatus::Stopped;
  }
  return store::TrialStatus::Failed;
}
}  // namespace

TrialRecord to_trial_record(const store::TrialInfo& info, const std::map<int, protocol::Done>& summaries) {
  TrialRecord r;
  r.id = loaded_id(info.id);
  // A config a newer or older Tunebench wrote may carry unknown knobs: keep what parses.
  r.config = config::from_json(info.config).config;
  r.config.name = info.name;
  // Imported traces know few knobs (config/known_settings.h): the table must not show a default.
  if (!config::is_known(info.config, "model")) r.config.model = "unknown";
  switch (info.status) {
    case store::TrialStatus::Queued: r.status = TrialRecord::Status::Queued; break;
    case store::TrialStatus::Running: r.status = TrialRecord::Status::Running; break;
    case store::TrialStatus::Done: r.status = TrialRecord::Status::Succeeded; break;
    case store::TrialStatus::Failed: r.status = TrialRecord::Status::Failed; break;
    case store::TrialStatus::Interrupted:
    case store::TrialStatus::Stopped: r.status = TrialRecord::Status::Stopped; break;
  }
  r.reason = QString::fromStdString(info.exit_reason);
  if (info.status == store::TrialStatus::Interrupted && r.reason.isEmpty())
    r.reason = QStringLiteral("interrupted: its writer went away (crash or kill) before the trial ended");
  if (info.start_us) r.started = QDateTime::fromMSecsSinceEpoch(*info.start_us / 1000);
  r.steps = int(r.config.steps);
  r.step = int(info.step_count / std::max<int64_t>(1, r.config.world_size));
  double tokens = 0.0;
  for (const auto& [rank, done] : summaries) {
    if (rank == 0 && done.summary.step_ms_median > 0.0) r.step_ms_median = done.summary.step_ms_median;
    tokens += done.summary.tokens_per_s;
  }
  if (tokens > 0.0) r.tokens_per_s = tokens;
  return r;
}

SessionController::SessionController(TrialsModel* model, QObject* parent) : QObject(parent), m_model(model) {}

SessionController::~SessionController() = default;

bool SessionController::fail(const std::exception& e) {
  m_error = QString::fromStdString(e.what());
  return false;
}

bool SessionController::newSession(const QString& path, const QString& name) {
  try {
    const QString n = name.isEmpty() ? QFileInfo(path).completeBaseName() : name;
    return adopt(std::make_unique<store::SessionStore>(store::SessionStore::create(path.toStdString(), n.toStdString())), false);
  } catch (const std::exception& e) {
    return fail(e);
  }
}

bool SessionController::openSession(const QString& path, bool foreign) {
  try {
    // open() inspects the file read-only first: a corrupt or foreign file throws before anything
    // is written, and the session we have stays current.
    auto opened = std::make_unique<store::SessionStore>(store::SessionStore::open(path.toStdString()));
    return adopt(std::move(opened), foreign);
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
  if (!newSession(path, QStringLiteral("scratch"))) return false;
  m_scratch = std::move(dir);  // after the old session is released
  return true;
}

bool SessionController::adopt(std::unique_ptr<store::SessionStore> opened, bool foreign) {
  if (m_writer) {
    m_error = QStringLiteral("A trial is being recorded into the current session; stop it first.");
    return false;
  }
  m_store = std::move(opened);
  m_foreign = foreign;
  m_pendingStoredConfig = false;
  m_error.clear();
  reload();
  emit sessionChanged();
  return true;
}

void SessionController::reload() {
  m_model->clear();
  m_storeIds.clear();
  if (!m_store) return;
  try {
    for (const store::TrialInfo& info : m_store->list_trials()) {
      TrialRecord record = to_trial_record(info, m_store->trial_summaries(info.id));
      m_storeIds.insert(record.id, info.id);
      m_model->upsert(record);
    }
  } catch (const std::exception& e) {
    fail(e);
    emit storeFailed(m_error);
  }
  emit trialCountChanged(m_model->rowCount());
}

QString SessionController::path() const { return m_store ? QString::fromStdString(m_store->path()) : QString(); }

QString SessionController::sessionName() const {
  try {
    return m_store ? QString::fromStdString(m_store->info().name) : QString();
  } catch (const std::exception&) {
    return QFileInfo(path()).completeBaseName();
  }
}

bool SessionController::saveAs(const QString& path) {
  if (!m_store) return false;
  try {
    m_store->save_as(path.toStdString());
  } catch (const std::exception& e) {
    return fail(e);
  }
  // Continue in the copy, as Save As does everywhere. It is ours now: we just wrote it.
  if (m_writer) return true;  // keep recording where the run started; the copy is a snapshot
  return openSession(path, m_foreign);
}

std::optional<store::ImportResult> SessionController::importLog(const QString& jsonlPath, const QString& name) {
  if (!m_store) return std::nullopt;
  try {
    store::ImportResult result = store::import_event_log(*m_store, jsonlPath.toStdString(), name.toStdString());
    const store::TrialInfo info = m_store->trial(result.trial_id);
    TrialRecord record = to_trial_record(info, m_store->trial_summaries(info.id));
    m_storeIds.insert(record.id, info.id);
    m_model->upsert(record);
    emit trialCountChanged(m_model->rowCount());
    return result;
  } catch (const std::exception& e) {
    fail(e);
    return std::nullopt;
  }
}

std::optional<import::TraceImportResult> SessionController::importTraceTrial(const import::TraceTrial& trial) {
  if (!m_store) return std::nullopt;
  try {
    import::TraceImportResult result = import::store_trace_trial(*m_store, trial);
    const store::TrialInfo info = m_store->trial(result.trial_id);
    TrialRecord record = to_trial_record(info, m_store->trial_summaries(info.id));
    m_storeIds.insert(record.id, info.id);
    m_model->upsert(record);
    emit trialCountChanged(m_model->rowCount());
    return result;
  } catch (const std::exception& e) {
    fail(e);
    return std::nullopt;
  }
}

bool SessionController::editKnownSettings(const QString& recordId, const QStringList& settings,
                                          const QStringList& forget) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) {
    m_error = QStringLiteral("this trial is not stored in the session");
    return false;
  }
  std::vector<std::string> set, drop;
  for (const QString& s : settings) set.push_back(s.toStdString());
  for (const QString& k : forget) drop.push_back(k.toStdString());
  try {
    import::edit_known_settings(*m_store, id, set, drop);
    m_model->upsert(to_trial_record(m_store->trial(id), m_store->trial_summaries(id)));
    return true;
  } catch (const std::exception& e) {
    return fail(e);
  }
}

QString SessionController::takeLaunchSource() {
  const QString source = m_pendingStoredConfig && !m_pendingSource.isEmpty() ? m_pendingSource : QStringLiteral("live");
  m_pendingStoredConfig = false;
  m_pendingSource.clear();
  return source;
}

void SessionController::addQueuedTrial(const TrialRecord& record, const QString& source) {
  if (!m_store) return;
  try {
    const qint64 id = m_store->add_trial(record.config.name.empty() ? record.id.toStdString() : record.config.name,
                                         config::to_json(record.config), store::TrialStatus::Queued, source.toStdString());
    m_storeIds.insert(record.id, id);
  } catch (const std::exception& e) {
    fail(e);
    emit storeFailed(m_error);
  }
  emit trialCountChanged(m_model->rowCount());
}

void SessionController::beginLiveTrial(const QString& recordId) {
  m_writer.reset();
  m_liveId = recordId;
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return;
  try {
    m_writer = std::make_unique<store::TrialWriter>(m_store->path(), id);
  } catch (const std::exception& e) {
    fail(e);
    emit storeFailed(QStringLiteral("This trial is not recorded in the session: %1").arg(m_error));
  }
}

void SessionController::addEvents(const EventBatch& batch) {
  if (!m_writer) return;
  for (const protocol::Event& e : batch) m_writer->add(e);
}

qint64 SessionController::liveCommitted() const { return m_writer ? m_writer->committed() : -1; }

void SessionController::finishLiveTrial(const TrialOutcome& outcome) {
  const QString recordId = outcome.trial_id.isEmpty() ? m_liveId : outcome.trial_id;
  const std::string reason = outcome.reason.toStdString();
  try {
    if (m_writer) {
      m_writer->finish(to_store_status(outcome.status), reason);
    } else if (m_store && storeId(recordId) >= 0) {
      m_store->set_trial_status(storeId(recordId), to_store_status(outcome.status), reason);  // it never started
    }
  } catch (const std::exception& e) {
    fail(e);
    emit storeFailed(m_error);
  }
  m_writer.reset();
  m_liveId.clear();
}

void SessionController::markStopped(const QString& recordId, const QString& reason) {
  if (!m_store || storeId(recordId) < 0) return;
  try {
    m_store->set_trial_status(storeId(recordId), store::TrialStatus::Stopped, reason.toStdString());
  } catch (const std::exception& e) {
    fail(e);
  }
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

bool SessionController::deleteTrial(const QString& recordId) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return false;
  if (recordId == m_liveId) {
    m_error = QStringLiteral("The trial is running; stop it before deleting it.");
    return false;
  }
  try {
    m_store->delete_trial(id);
  } catch (const std::exception& e) {
    return fail(e);
  }
  m_storeIds.remove(recordId);
  m_model->removeTrial(recordId);
  emit trialCountChanged(m_model->rowCount());
  return true;
}

bool SessionController::annotateTrial(const QString& recordId, const QString& notes, const QStringList& tags) {
  const qint64 id = storeId(recordId);
  if (!m_store || id < 0) return false;
  std::vector<std::string> tagList;
  for (const QString& t : tags)
    if (!t.trimmed().isEmpty()) tagList.push_back(t.trimmed().toStdString());
  try {
    m_store->set_trial_notes(id, notes.toStdString());
    m_store->set_trial_tags(id, tagList);
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
