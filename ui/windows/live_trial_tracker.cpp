#include "ui/windows/live_trial_tracker.h"

#include <QDateTime>

#include "core/launch/link_probe.h"
#include "ui/models/trials_model.h"
#include "ui/runner/replay_source.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/session_controller.h"

namespace tunebench::ui {

LiveTrialTracker::LiveTrialTracker(TrialsModel* trials, SessionController* session, TrialQueue* queue, QObject* parent)
    : QObject(parent), m_trials(trials), m_session(session), m_queue(queue) {
  setObjectName(QStringLiteral("liveTrialTracker"));
  connect(m_session, &SessionController::liveTrialStored, this, [this](const TrialOutcome& outcome) {
    // In the file now: the cache need not keep it (comparisons load it from the file).
    if (m_session->storeId(outcome.trial_id) >= 0) m_logs.remove(outcome.trial_id);
    emit trialFinished(outcome);
  });
}

QString LiveTrialTracker::enqueue(const config::TrialConfig& config, const QString& source,
                                  const std::optional<launch::LinkProbeRange>& linkProbe,
                                  const QString& workerProgram) {
  TrialRequest request;
  request.id = QStringLiteral("t%1-%2")
                   .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                   .arg(++m_counter);
  request.config = config;
  if (request.config.name.empty()) request.config.name = request.id.toStdString();
  request.worker_program = workerProgram;
  request.link_probe = linkProbe;
  TrialRecord record;
  record.id = request.id;
  record.config = request.config;
  record.steps = linkProbe ? launch::link_probe_points(*linkProbe) : int(request.config.steps);
  record.source = source;
  m_trials->upsert(record);
  m_session->addQueuedTrial(record, source);
  m_queue->enqueue(request);
  return request.id;
}

QString LiveTrialTracker::addReplay(ReplaySource* replay, const QString& fileName) {
  m_replay = replay;
  TrialRecord record;
  record.id = replay->trialId();
  record.replay = true;
  record.steps = replay->plannedSteps();
  record.config.world_size = replay->worldSize();
  record.config.name = fileName.toStdString();
  if (m_trials->rowOf(record.id) >= 0) record.id += QStringLiteral("-%1").arg(++m_counter);
  m_trials->upsert(record);
  return record.id;
}

QString LiveTrialTracker::start(const QString& id) {
  m_current = id;
  m_stats.clear();
  m_logs.pin(id);  // recorded or not, the running trial's events stay until it ends
  TrialRecord* r = m_trials->find(id);
  if (!r) return id;
  r->status = protocol::TrialStatus::Running;
  r->started = QDateTime::currentDateTime();
  m_trials->touch(id);
  return QString::fromStdString(r->config.name);
}

void LiveTrialTracker::addEvents(const EventBatch& batch) {
  m_logs.add(m_current, batch);  // the running trial, for the view and the comparison
  m_stats.add(batch);
  TrialRecord* r = m_trials->find(m_current);
  if (!r) return;
  for (const auto& e : batch)
    if (r->replay && e.is<protocol::Hello>()) {  // a replay learns its config from the log
      const auto parsed = config::from_json(e.as<protocol::Hello>().config);
      const std::string name = r->config.name;
      r->config = parsed.config;
      r->config.name = name;
    }
  r->step_ms_median = m_stats.stepMsMedian();
  r->tokens_per_s = m_stats.tokensPerSecond();
  m_trials->touch(m_current);
}

void LiveTrialTracker::setProgress(const TrialProgress& progress) {
  TrialRecord* r = m_trials->find(m_current);
  if (!r) return;
  r->step = progress.step;
  r->steps = progress.steps;
  m_trials->touch(m_current);
}

void LiveTrialTracker::finish(const TrialOutcome& outcome, bool recorded) {
  if (TrialRecord* r = m_trials->find(m_current)) {
    r->status = outcome.status;
    r->reason = outcome.reason;
    r->stderr_tail = outcome.stderr_tail;
    m_trials->touch(m_current);
  }
  m_logs.unpin(m_current);
  // A recorded trial is announced once its end is in the file (SessionController::liveTrialStored).
  if (!recorded) emit trialFinished(outcome);
}

bool LiveTrialTracker::isBusy() const { return m_queue->runner()->isActive() || (m_replay && m_replay->isActive()); }

bool LiveTrialTracker::cancel(const QString& id) {
  if (m_queue->runner()->isActive() && m_queue->runner()->trialId() == id) {
    stop();
    return true;
  }
  if (!m_queue->remove(id)) return false;
  markRemovedFromQueue(id);
  return true;
}

bool LiveTrialTracker::stop() {
  if (m_replay && m_replay->isActive()) m_replay->stop();
  if (!m_queue->runner()->isActive()) return false;
  m_queue->runner()->stop();
  return true;
}

void LiveTrialTracker::stopAll() {
  for (const TrialRequest& pending : m_queue->pending()) markRemovedFromQueue(pending.id);
  m_queue->stopAll();
  if (m_replay) m_replay->stop();
}

void LiveTrialTracker::markRemovedFromQueue(const QString& id) {
  TrialRecord* r = m_trials->find(id);
  if (!r) return;
  r->status = protocol::TrialStatus::Stopped;
  r->reason = QStringLiteral("removed from the queue");
  m_trials->touch(id);
  m_session->markStopped(id, r->reason);
  TrialOutcome outcome;
  outcome.trial_id = id;
  outcome.status = protocol::TrialStatus::Stopped;
  outcome.exit_code = 130;
  outcome.reason = r->reason;
  emit removedFromQueue(outcome);
}

}  // namespace tunebench::ui
