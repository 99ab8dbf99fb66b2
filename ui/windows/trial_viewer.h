// TrialViewer: decides which trial the centre view shows, so every row of the trials table can be
// looked at: the trial selected in the table (a stored one is loaded in the background, its
// timeline, step time, throughput and telemetry drawn by the same plots as a live run), and the
// live run when one starts. Live events keep arriving while a stored trial is shown; they go to
// the log cache, from which the live trial is redrawn when its row is selected again.
//
// When another session opens, the view is cleared (nothing of the previous session stays on
// screen) and shows the session's most recent trial that has data.
#pragma once

#include <memory>

#include <QObject>
#include <QString>

#include "ui/runner/runner_types.h"

class QItemSelectionModel;
class QModelIndex;

namespace tunebench::ui {

class LiveView;
class SessionController;
class TrialLogCache;
class TrialsModel;
struct TrialViewData;

class TrialViewer : public QObject {
  Q_OBJECT
 public:
  TrialViewer(LiveView* view, TrialsModel* trials, QItemSelectionModel* selection, SessionController* session,
              const TrialLogCache* cache, QObject* parent = nullptr);

  // The record id shown (or being loaded), empty when none.
  QString shown() const { return m_shown; }
  bool isShowingLive() const { return !m_live.isEmpty() && m_shown == m_live; }
  QString liveTrial() const { return m_live; }
  bool isLoading() const { return !m_loading.isEmpty(); }

  // Shows this trial: live, from the cache (replays), or loaded from the session file.
  void show(const QString& recordId);
  // Shows the shown trial again (its stored data changed, e.g. its known settings).
  void reload();

  // ---- fed by the window ----
  void liveStarting(const QString& recordId, const QString& title);
  void liveEvents(const EventBatch& batch);
  void liveFinished(const TrialOutcome& outcome);
  void sessionChanged();

 signals:
  void shownChanged(const QString& recordId);

 private:
  void onLoaded(const QString& recordId, std::shared_ptr<TrialViewData> data);
  void onCurrentRowChanged(const QModelIndex& current);
  void showFromCache(const QString& recordId);

  LiveView* m_view;
  TrialsModel* m_trials;
  QItemSelectionModel* m_selection;
  SessionController* m_session;
  const TrialLogCache* m_cache;
  QString m_shown;
  QString m_live;
  QString m_loading;
};

}  // namespace tunebench::ui
