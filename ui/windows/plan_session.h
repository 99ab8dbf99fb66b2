// The session reads and writes of the plan windows (InvestigateWindow, AutotuneDialog). Each runs
// as a BackgroundJob with its own short-lived read-write connection (opening a search scores the
// whole space, loading a plan's trials reads every arm: seconds on a big session), never on the
// GUI thread; the integrity check is skipped (the file was checked when it was opened).
//
// PlanJobs::run: `read` runs on the job's thread and returns a plain result; `show` gets it on the
// GUI thread, or `failed` gets the exception's sentence. Neither runs once the owner is gone, and
// no exception reaches a slot. isBusy(): a job of this owner is queued or running.
#pragma once

#include <functional>
#include <memory>

#include <QPointer>
#include <QString>

#include "core/store/session_store.h"
#include "ui/runner/background_jobs.h"

namespace tunebench::ui {

inline store::SessionStore open_plan_session(const QString& path) {
  store::SessionStore::OpenOptions o;
  o.check_integrity = false;
  return store::SessionStore::open(path.toStdString(), o);
}

class PlanJobs {
 public:
  // `owner` owns this object (a member of it).
  PlanJobs(BackgroundJobs* jobs, QObject* owner, const QString& sessionPath)
      : m_jobs(jobs), m_owner(owner), m_path(sessionPath) {}

  bool isBusy() const { return m_inFlight > 0; }

  template <class Result>
  void run(const QString& title, std::function<Result(store::SessionStore&)> read, std::function<void(Result)> show,
           std::function<void(const QString&)> failed) {
    ++m_inFlight;
    QPointer<QObject> guard(m_owner);
    const QString path = m_path;
    m_jobs->submit(title,
                   [this, guard, path, read = std::move(read), show = std::move(show),
                    failed = std::move(failed)](JobProgress&) -> BackgroundJobs::Apply {
                     try {
                       auto session = open_plan_session(path);
                       auto result = std::make_shared<Result>(read(session));
                       return [this, guard, show, result] {
                         if (!guard) return;  // the owner, and this with it, is gone
                         --m_inFlight;
                         show(std::move(*result));
                       };
                     } catch (const std::exception& e) {
                       const QString message = QString::fromStdString(e.what());
                       return [this, guard, failed, message] {
                         if (!guard) return;
                         --m_inFlight;
                         failed(message);
                       };
                     }
                   });
  }

 private:
  BackgroundJobs* m_jobs;
  QObject* m_owner;
  QString m_path;
  int m_inFlight = 0;
};

}  // namespace tunebench::ui
