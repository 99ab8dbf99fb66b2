#include "ui/windows/run_control.h"

#include <QFileInfo>

#include <memory>

#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/run_status.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"
#include "ui/windows/trial_viewer.h"
#include "ui/windows/trials_panel.h"

namespace tunebench::ui {

RunControl::RunControl(const Parts& parts, QObject* parent) : QObject(parent), m_parts(parts) {
  setObjectName(QStringLiteral("runControl"));
  connectSource(m_parts.queue->runner(), true);
  connect(m_parts.queue, &TrialQueue::trialStarting, this, &RunControl::onTrialStarting);
}

void RunControl::connectSource(LiveSource* source, bool recorded) {
  connect(source, &LiveSource::started, this, &RunControl::busyChanged);
  connect(source, &LiveSource::eventsArrived, this, &RunControl::onEvents);
  connect(source, &LiveSource::progress, this, &RunControl::onProgress);
  connect(source, &LiveSource::logLine, m_parts.log, &LogPane::appendLine);
  connect(source, &LiveSource::finished, this,
          [this, recorded](const TrialOutcome& outcome) { onFinished(outcome, recorded); });
}

bool RunControl::runTrial() {
  TrialForm* form = m_parts.form;
  if (const int n = form->validateAndShow()) {
    form->revealFirstProblem();
    emit statusMessage(QStringLiteral("Not started: %1 problem(s) in the form, shown next to the fields").arg(n), 6000);
    return false;
  }
  if (m_replay && m_replay->isActive()) {
    emit statusMessage(QStringLiteral("Stop the replay first (Ctrl+.)"), 6000);
    return false;
  }
  LaunchRequest request;
  request.configs = {form->config()};
  request.what = QStringLiteral("Run");
  request.fromSession = form->origin().fromSession;
  if (!form->origin().source.isEmpty()) request.source = form->origin().source;
  // Once the user has seen and accepted a stored config, the form's copy is theirs: asked once.
  const auto result = m_parts.launcher->launch(request, [form](const QStringList& ids) {
    if (!ids.isEmpty() && form->origin().fromSession) form->setConfig(form->config());
  });
  return result == TrialLauncher::Result::Queued;
}

QString RunControl::queueConfig(const config::TrialConfig& config) {
  LaunchRequest request;
  request.configs = {config};
  request.what = QStringLiteral("queue %1").arg(QString::fromStdString(config.name));
  auto id = std::make_shared<QString>();
  m_parts.launcher->launch(request, [id](const QStringList& ids) { *id = ids.value(0); });
  return *id;
}

void RunControl::stopTrial() {
  if (m_parts.tracker->stop()) emit statusMessage(QStringLiteral("Stopping every rank…"), 3000);
}

bool RunControl::cancelTrial(const QString& id) {
  const bool running = m_parts.queue->runner()->isActive() && m_parts.queue->runner()->trialId() == id;
  if (!m_parts.tracker->cancel(id)) return false;
  if (running) emit statusMessage(QStringLiteral("Stopping every rank…"), 3000);
  emit busyChanged();
  return true;
}

bool RunControl::replayLog(const QString& path, double speed) {
  if (m_parts.tracker->isBusy()) {
    emit statusMessage(QStringLiteral("A trial is running; stop it before replaying"), 6000);
    return false;
  }
  if (m_replay) m_replay->deleteLater();  // this may run inside the old replay's finished signal
  m_replay = new ReplaySource(this);
  if (!m_replay->load(path)) {
    m_parts.log->appendError(m_replay->errorString());
    emit statusMessage(m_replay->errorString(), 8000);
    return false;
  }
  connectSource(m_replay, false);
  onTrialStarting(m_parts.tracker->addReplay(m_replay, QFileInfo(path).fileName()));
  m_replay->start(speed);
  return true;
}

void RunControl::stopReplay() {
  if (m_replay) m_replay->stop();
}

void RunControl::onTrialStarting(const QString& id) {
  const QString name = m_parts.tracker->start(id);
  m_parts.viewer->liveStarting(id, name);
  // The row of what is shown is the current one, unless the user holds several rows.
  m_parts.panel->makeCurrent(id);
  emit liveShown();
  m_parts.sessionActions->setBusy(true);
  emit statusCleared();
  m_parts.runStatus->starting(name);
  emit busyChanged();
}

void RunControl::onEvents(const EventBatch& batch) {
  m_parts.viewer->liveEvents(batch);
  m_parts.tracker->addEvents(batch);
}

void RunControl::onProgress(const TrialProgress& progress) {
  m_parts.live->setProgress(progress);
  m_parts.runStatus->setProgress(progress);
  m_parts.tracker->setProgress(progress);
}

void RunControl::onFinished(const TrialOutcome& outcome, bool recorded) {
  m_parts.viewer->liveFinished(outcome);
  m_parts.sessionActions->setBusy(false);
  m_parts.runStatus->finished(outcome);
  if (outcome.status == protocol::TrialStatus::Failed)
    m_parts.log->appendError(QStringLiteral("%1 failed: %2").arg(m_parts.runStatus->name(), outcome.reason) +
                             (outcome.stderr_tail.isEmpty() ? QString() : QStringLiteral("\n") + outcome.stderr_tail));
  emit busyChanged();
  m_parts.tracker->finish(outcome, recorded);  // last: it may announce the end (trialFinished)
}

}  // namespace tunebench::ui
