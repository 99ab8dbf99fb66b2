#include "ui/windows/trial_viewer.h"

#include <utility>

#include <QItemSelectionModel>

#include "ui/models/trial_log_cache.h"
#include "ui/models/trial_log_events.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/live_view.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_view_data.h"

namespace tunebench::ui {

TrialViewer::TrialViewer(LiveView* view, TrialsModel* trials, QItemSelectionModel* selection,
                         SessionController* session, const TrialLogCache* cache, QObject* parent)
    : QObject(parent), m_view(view), m_trials(trials), m_selection(selection), m_session(session), m_cache(cache) {
  setObjectName(QStringLiteral("trialViewer"));
  connect(m_selection, &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { onCurrentRowChanged(current); });
  connect(m_session, &SessionController::trialLoaded, this, &TrialViewer::onLoaded);
}

void TrialViewer::onCurrentRowChanged(const QModelIndex& current) {
  if (!current.isValid()) return;
  show(current.data(TrialsModel::TrialIdRole).toString());
}

void TrialViewer::show(const QString& recordId) {
  if (recordId.isEmpty() || recordId == m_shown) return;
  const TrialRecord* r = m_trials->find(recordId);
  if (!r) return;
  m_loading.clear();
  const QString name = r->config.name.empty() ? recordId : QString::fromStdString(r->config.name);
  if (recordId == m_live || (m_cache->contains(recordId) && m_session->storeId(recordId) < 0) ||
      (m_cache->contains(recordId) && r->status == protocol::TrialStatus::Running)) {
    showFromCache(recordId);
    return;
  }
  if (m_session->storeId(recordId) >= 0) {
    if (r->status == protocol::TrialStatus::Queued) {
      m_shown = recordId;
      m_view->clear(QStringLiteral("%1 — queued, not run yet").arg(name));
      emit shownChanged(recordId);
      return;
    }
    m_shown = recordId;
    m_loading = recordId;
    m_view->clear(QStringLiteral("%1 — loading…").arg(name));
    m_session->loadTrialForView(recordId);
    emit shownChanged(recordId);
  }
}

void TrialViewer::reload() { show(std::exchange(m_shown, QString())); }

void TrialViewer::showFromCache(const QString& recordId) {
  // The live trial (or a replay) is redrawn from the events this window received. The copy and
  // the conversion run as a job; live events that arrive meanwhile are added after it.
  auto log = m_cache->log(recordId);
  const TrialRecord* r = m_trials->find(recordId);
  const QString name = r && !r->config.name.empty() ? QString::fromStdString(r->config.name) : recordId;
  m_shown = recordId;
  m_view->clear(name);
  emit shownChanged(recordId);
  if (!log) return;
  m_loading = recordId;
  auto shared = std::make_shared<protocol::TrialLog>(std::move(*log));
  m_session->jobs()->submit(
      QStringLiteral("Drawing a trial"),
      [this, shared, recordId, name](JobProgress&) {
        auto data = std::make_shared<TrialViewData>();
        data->recordId = recordId;
        data->title = name;
        data->events = trial_log_events(*shared);
        data->timeline.add(data->events);
        return std::function<void()>([this, recordId, data] { onLoaded(recordId, data); });
      },
      QStringLiteral("view"));
}

void TrialViewer::onLoaded(const QString& recordId, std::shared_ptr<TrialViewData> data) {
  if (recordId != m_loading || !data) return;  // the user has moved on
  m_loading.clear();
  const bool live = recordId == m_live;
  m_view->showTrial(std::move(*data), live);
}

void TrialViewer::liveStarting(const QString& recordId, const QString& title) {
  // A new run takes the view: what the user started is what they want to watch.
  m_live = recordId;
  m_shown = recordId;
  m_loading.clear();
  m_view->clear(title);
  emit shownChanged(recordId);
}

void TrialViewer::liveEvents(const EventBatch& batch) {
  if (isShowingLive() && m_loading.isEmpty()) m_view->addEvents(batch);
  // While the redraw job runs, the cache has these events too: the redraw includes what it
  // copied, and later ones arrive here again after it; a few in between are not drawn until the
  // row is selected again (the file and the cache have them).
}

void TrialViewer::liveFinished(const TrialOutcome& outcome) {
  if (isShowingLive()) {
    m_view->setOutcome(outcome);
    m_view->replotNow();
  }
  m_live.clear();
}

void TrialViewer::sessionChanged() {
  m_shown.clear();
  m_loading.clear();
  m_view->clear(
      m_trials->rowCount()
          ? QStringLiteral("Select a trial in the table to see its timeline and plots")
          : QStringLiteral("No trial yet: choose a preset and press Run (Ctrl+R), or replay a log (Ctrl+O)."));
  // The most recent trial that ran, so a reopened session shows something of its own at once.
  for (int row = m_trials->rowCount() - 1; row >= 0; --row) {
    const TrialRecord& r = m_trials->record(row);
    if (r.status == protocol::TrialStatus::Queued || r.step == 0) continue;
    m_selection->setCurrentIndex(m_trials->index(row, 0),
                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    show(r.id);  // when the row was current already
    return;
  }
}

}  // namespace tunebench::ui
