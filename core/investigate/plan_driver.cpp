#include "core/investigate/plan_driver.h"

#include <utility>

namespace tunebench::investigate {

using store::PlanState;
using protocol::TrialStatus;

namespace {
constexpr const char* kCancelled = "Cancelled: nothing of the plan runs now. Resuming it continues where it stopped; "
                                   "what finished is kept.";
}  // namespace

void PlanActions::append(PlanActions&& more) {
  if (more.store_state) store_state = more.store_state;
  if (more.read_step) read_step = more.read_step;
  if (more.launch) launch = std::move(more.launch);
  if (more.stop_trial) stop_trial = std::move(more.stop_trial);
  if (more.finish) finish = more.finish;
  for (auto& n : more.notes) notes.push_back(std::move(n));
}

PlanDriver::PlanDriver(PlanKind kind, int64_t plan_id) : m_kind(kind), m_plan_id(plan_id) {}

std::string PlanDriver::plan_name() const { return "plan " + std::to_string(m_plan_id); }

PlanActions PlanDriver::note(std::string text) {
  m_status = text;
  PlanActions a;
  a.notes.push_back(std::move(text));
  return a;
}

PlanActions PlanDriver::read() {
  m_phase = Phase::Reading;
  PlanActions a;
  a.read_step = ++m_seq;
  return a;
}

PlanActions PlanDriver::finish(PlanState state, std::string text) {
  m_phase = Phase::Idle;
  m_state = state;
  m_handle.clear();
  m_counted_before = -1;
  PlanActions a = note(std::move(text));
  a.finish = state;
  return a;
}

PlanActions PlanDriver::start() {
  if (active()) return {};
  m_state = PlanState::Running;
  m_counted_before = -1;
  m_status = "Starting " + plan_name() + "…";
  PlanActions a = read();
  a.store_state = PlanState::Running;
  return a;
}

PlanActions PlanDriver::step_read(uint64_t seq, const PlanStep& step) {
  if (m_phase != Phase::Reading || seq != m_seq) return {};
  m_finished = step.finished;
  m_planned = step.planned;
  // A trial that ended counted must be counted now, or the same trial would be asked for again.
  if (m_counted_before >= 0 && step.finished <= m_counted_before)
    return finish(PlanState::Paused, "The trial \"" + m_why + "\" ended, but " + plan_name() +
                                         " does not count it (its plan tags are not in the session). The plan is "
                                         "paused; resuming it runs the trial again.");
  m_counted_before = -1;
  if (!step.next) {
    if (m_kind == PlanKind::Tune) return finish(PlanState::Done, "Done: the search is finished (" + plan_name() + ").");
    return finish(PlanState::Done, step.complete ? "Done: every planned trial is measured (" + plan_name() + ")."
                                                 : "Done within the budget (" + plan_name() +
                                                       "): a larger budget measures the rest when the plan is resumed.");
  }
  m_phase = Phase::Launching;
  m_why = step.why;
  m_handle.clear();
  const std::string count = m_kind == PlanKind::Investigate && step.planned > 0
                                ? std::to_string(step.finished + 1) + "/" + std::to_string(step.planned)
                                : std::to_string(step.finished + 1);
  PlanActions a = note("[" + count + "] " + step.why);
  a.launch = step.next;
  m_launched_with = step.finished;
  return a;
}

PlanActions PlanDriver::launch_waiting() {
  if (m_phase != Phase::Launching) return {};
  m_phase = Phase::Previewing;
  return note("Running: " + m_why + " — waiting for your answer in the launch preview");
}

PlanActions PlanDriver::trial_queued(const std::string& handle) {
  PlanActions a;
  switch (m_phase) {
    case Phase::Launching:
    case Phase::Previewing:
      m_phase = Phase::Running;
      m_handle = handle;
      m_status = "Running: " + m_why;  // the progress line was said at launch
      return a;
    case Phase::Stopping:
      if (m_handle.empty()) {  // Cancel came while it was being launched
        m_handle = handle;
        a.stop_trial = handle;
      }
      return a;
    case Phase::Idle:
      // Accepted in a launch preview after the plan was cancelled: it must not run outside it.
      a.stop_trial = handle;
      return a;
    default:
      return a;
  }
}

PlanActions PlanDriver::launch_refused(const std::string& reason) {
  if (m_phase == Phase::Launching || m_phase == Phase::Previewing)
    return finish(PlanState::Paused, "Not started: " + reason + ". The plan is paused; resuming it tries again.");
  if (m_phase == Phase::Stopping && m_handle.empty()) return finish(PlanState::Paused, kCancelled);
  return {};
}

PlanActions PlanDriver::trial_ended(const std::string& handle, TrialStatus status, int64_t stored_id,
                                    const std::string& message) {
  if ((m_phase != Phase::Running && m_phase != Phase::Stopping) || handle != m_handle) return {};
  if (m_phase == Phase::Stopping)
    return finish(PlanState::Paused, kCancelled);
  if (stored_id <= 0)
    return finish(PlanState::Paused,
                  "The trial \"" + m_why + "\" was not stored" + (message.empty() ? "" : ": " + message) +
                      ". The plan is paused; resuming it runs the trial again.");
  if (status == TrialStatus::Done || status == TrialStatus::Failed) {
    PlanActions a;
    if (status == TrialStatus::Failed)
      a = note("    trial " + std::to_string(stored_id) + " failed" + (message.empty() ? "" : ": " + message));
    m_counted_before = m_launched_with;
    a.append(read());
    return a;
  }
  return finish(PlanState::Paused, "Paused: the trial \"" + m_why + "\" was " +
                                       (status == TrialStatus::Interrupted ? "interrupted" : "stopped") +
                                       ". The plan is paused; resuming it continues where it stopped.");
}

PlanActions PlanDriver::cancel() {
  switch (m_phase) {
    case Phase::Idle:
    case Phase::Stopping:
      return {};
    case Phase::Running: {
      m_phase = Phase::Stopping;
      PlanActions a = note("Cancelling: stopping the plan's trial…");
      a.stop_trial = m_handle;
      return a;
    }
    case Phase::Launching:
      // The launcher has not answered yet (the window's launch is synchronous unless it asks in
      // a preview): the trial it queues is stopped when it says so.
      m_phase = Phase::Stopping;
      m_handle.clear();
      return note("Cancelling…");
    default:  // Reading, Previewing: nothing runs
      return finish(PlanState::Paused, kCancelled);
  }
}

PlanActions PlanDriver::failed(const std::string& message) {
  if (!active()) return note(message);
  PlanActions a;
  if ((m_phase == Phase::Running || m_phase == Phase::Stopping) && !m_handle.empty()) a.stop_trial = m_handle;
  a.append(finish(PlanState::Paused, message));
  return a;
}

}  // namespace tunebench::investigate
