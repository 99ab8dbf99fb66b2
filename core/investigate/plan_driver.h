// PlanDriver: the one set of rules that runs a plan (an investigation or an autotune search) trial
// by trial, for the command line and the window alike.
//
// The CLI's run_plan (plan_run.h: a blocking executor) and the window's PlanRun (ui/windows: the
// TrialLauncher, the queue, background jobs) own the session, the trials and the user's buttons;
// they feed what happens here and carry out what comes back, as TrialSupervisor's adapters do. So
// a Stop, a Cancel, a refused launch or a failed read ends a plan with the same state and words in
// both. Pure logic: no session, no processes, no clock.
//
// Fed:      start (Start / Resume), what the session says the plan needs next (step_read), the
//           launcher's answers (trial_queued, launch_waiting, launch_refused), the plan trial's end
//           (trial_ended, with its status), Cancel, and failures of the adapter's session work.
// Returns:  PlanActions: the state to store, a read of the next step, a trial to launch or to stop,
//           the end to store, and lines for people.
// Rules:
//   - what runs next is always read from the session (the plan's stored trials), so a resumed plan
//     runs only what is missing;
//   - a trial that ends done or failed counts; the next step is read;
//   - a trial stopped or interrupted (Stop in the window, Ctrl-C) pauses the plan: Resume continues;
//   - Cancel stops the plan's trial in flight and pauses; a launch refused (or its preview
//     cancelled) pauses; a failed read or write pauses with its sentence;
//   - a trial that ended counted but is not counted by the plan's next read (its tags were not
//     stored) pauses instead of running it again forever;
//   - nothing left to run within the budget: done.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/investigate/trial_executor.h"
#include "core/protocol/trial_status.h"
#include "core/store/plans.h"

namespace tunebench::investigate {

enum class PlanKind { Investigate, Tune };

// What the plan needs next, as the adapter read it from the session (plan_run.h: read_plan_step).
struct PlanStep {
  std::optional<TrialRequest> next;  // nullopt: nothing left within the budget
  std::string why;                   // for people: "v3 num_workers 4", "mb 2 ckpt (40 s of trials so far)"
  int finished = 0;                  // the plan's trials that ended done or failed
  int planned = 0;                   // investigate: trials of the schedule without repeats; tune: 0 (unknown)
  bool complete = false;             // nothing is left to run even with no budget
};

struct PlanActions {
  std::optional<store::PlanState> store_state;  // write the plan's state now
  uint64_t read_step = 0;                       // non-zero: read the next step, answer step_read(read_step, ...)
  std::optional<TrialRequest> launch;           // run or queue it; answer trial_queued or launch_refused
  std::optional<std::string> stop_trial;        // stop this plan trial (a handle trial_queued gave)
  std::optional<store::PlanState> finish;       // store the result of what ran and this state
  std::vector<std::string> notes;               // lines for people, oldest first
  void append(PlanActions&& more);
};

class PlanDriver {
 public:
  PlanDriver(PlanKind kind, int64_t plan_id);

  // Start or Resume; ignored while the plan runs.
  PlanActions start();
  // The answer to read_step `seq`; an answer to an older read (a Cancel came between) is ignored.
  PlanActions step_read(uint64_t seq, const PlanStep& step);
  // The launcher asks the user first (a launch preview).
  PlanActions launch_waiting();
  // The trial is queued (`handle`: the window's record id; the CLI's is empty).
  PlanActions trial_queued(const std::string& handle);
  // It will not run: refused by validation, or its preview was cancelled.
  PlanActions launch_refused(const std::string& reason);
  // The plan trial `handle` ended and its end is in the session (`stored_id` 0: nothing was
  // stored). Ends of other trials are ignored.
  PlanActions trial_ended(const std::string& handle, protocol::TrialStatus status, int64_t stored_id,
                          const std::string& message);
  // Cancel (the window's button, the CLI's Ctrl-C).
  PlanActions cancel();
  // The adapter's read or write of the session failed.
  PlanActions failed(const std::string& message);

  // Started and not yet ended: Start is refused, Cancel does something.
  bool active() const { return m_phase != Phase::Idle; }
  // What is (or is about to be) stored for the plan.
  store::PlanState state() const { return m_state; }
  bool awaiting_preview() const { return m_phase == Phase::Previewing; }
  // The last line for people: what a status line shows.
  const std::string& status() const { return m_status; }
  int finished() const { return m_finished; }
  int planned() const { return m_planned; }

 private:
  enum class Phase { Idle, Reading, Launching, Previewing, Running, Stopping };
  PlanActions note(std::string text);
  PlanActions read();
  PlanActions finish(store::PlanState state, std::string text);
  std::string plan_name() const;

  PlanKind m_kind;
  int64_t m_plan_id;
  Phase m_phase = Phase::Idle;
  store::PlanState m_state = store::PlanState::Planned;
  uint64_t m_seq = 0;           // the read whose answer is awaited
  std::string m_handle;         // the trial in flight (Running, Stopping)
  std::string m_why;            // of the trial in flight
  int m_launched_with = 0;      // finished trials when the trial in flight was launched
  int m_counted_before = -1;    // the same, for a trial that ended counted: the next read must count more
  int m_finished = 0;
  int m_planned = 0;
  std::string m_status;
};

}  // namespace tunebench::investigate
