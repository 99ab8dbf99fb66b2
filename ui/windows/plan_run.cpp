#include "ui/windows/plan_run.h"

#include <QPointer>

#include "core/store/plans.h"
#include "ui/windows/plan_session.h"

namespace tunebench::ui {

PlanRun::PlanRun(Hooks hooks, PlanJobs* jobs, QObject* parent) : QObject(parent), m_hooks(std::move(hooks)), m_jobs(jobs) {
  qRegisterMetaType<tunebench::ui::TrialOutcome>();
}

void PlanRun::setPlan(const investigate::PlanRef& plan) {
  if (m_driver.active()) return;
  m_plan = plan;
  m_driver = investigate::PlanDriver(plan.kind, plan.id);
}

bool PlanRun::start() {
  if (m_driver.active() || m_plan.id <= 0) return false;
  carryOut(m_driver.start());
  return true;
}

void PlanRun::cancel() { carryOut(m_driver.cancel()); }

void PlanRun::trialEnded(const TrialOutcome& outcome) {
  const qint64 stored = m_hooks.storeId ? m_hooks.storeId(outcome.trial_id) : 0;
  carryOut(m_driver.trial_ended(outcome.trial_id.toStdString(), outcome.status, std::max<qint64>(stored, 0),
                                outcome.reason.toStdString()));
}

void PlanRun::carryOut(investigate::PlanActions a) {
  if (!a.notes.empty()) emit statusChanged(status());
  const investigate::PlanRef plan = m_plan;
  if (a.store_state) {
    const store::PlanState state = *a.store_state;
    m_jobs->run<bool>(
        QStringLiteral("Storing the plan's state"),
        [plan, state](store::SessionStore& s) {
          store::set_plan_state(s, plan.id, state);
          return true;
        },
        [](bool) {}, [this](const QString& message) { carryOut(m_driver.failed(message.toStdString())); });
  }
  if (a.stop_trial && m_hooks.stop) m_hooks.stop(QString::fromStdString(*a.stop_trial));
  if (a.read_step) {
    const uint64_t seq = a.read_step;
    // Jobs run in order: this read sees the state stored above.
    m_jobs->run<investigate::PlanStep>(
        QStringLiteral("Reading the plan"), [plan](store::SessionStore& s) { return investigate::read_plan_step(s, plan); },
        [this, seq](investigate::PlanStep step) {
          emit stepRead(step);
          carryOut(m_driver.step_read(seq, step));
        },
        [this](const QString& message) {
          emit failed(message);
          carryOut(m_driver.failed(message.toStdString()));
        });
  }
  if (a.launch) {
    QPointer<PlanRun> self(this);
    m_hooks.launch(
        *a.launch,
        [self](const QString& recordId) {
          if (self) self->carryOut(self->m_driver.trial_queued(recordId.toStdString()));
        },
        [self] {
          if (self) self->carryOut(self->m_driver.launch_waiting());
        },
        [self](const QString& reason) {
          if (self) self->carryOut(self->m_driver.launch_refused(reason.toStdString()));
        });
  }
  if (a.finish) {
    const store::PlanState state = *a.finish;
    m_jobs->run<bool>(
        QStringLiteral("Storing the plan"),
        [plan, state](store::SessionStore& s) {
          investigate::store_plan_end(s, plan, state);
          return true;
        },
        [this, state](bool) { emit ended(state); },
        [this](const QString& message) {
          // The end could not be stored: say so (the driver is idle; a note only).
          carryOut(m_driver.failed(message.toStdString()));
          emit failed(message);
        });
  }
  // trial_queued changes the status without a note (the progress line was said at launch).
  if (a.notes.empty() && !a.launch) emit statusChanged(status());
}

}  // namespace tunebench::ui
