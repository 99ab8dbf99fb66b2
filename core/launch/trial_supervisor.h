// TrialSupervisor: the one set of rules that turns a running trial's processes into an outcome.
//
// The GUI's TrialRunner (QProcess, Qt timers) and the headless run_trial (ChildProcess, poll) own
// the processes, sockets and clocks; they feed what happens here and carry out what comes back.
// So a rank that fails, hangs or is stopped ends with the same status, exit code and words in the
// window and on the command line. Pure logic: no processes, no I/O, no clock of its own (every call
// takes `now`, seconds since the trial started), so tests drive it with a fake clock.
//
// Fed:      the processes' output bytes (lines are split here: an ssh node's rank-exit reports and
//           sbatch's job id are read, stderr tails kept), process exits and failed starts, events
//           (the hang check and progress), Stop, and clock ticks.
// Returns:  Actions: commands (terminate, kill, close stdin, scancel) for the adapter to carry out,
//           notes for the runner's log, and the output lines worth showing.
// Rules:
//   - a rank that exits non-zero, is killed by a signal or cannot start fails the trial; so does an
//     ssh connection that ends before its ranks reported their exits, and a failed srun/sbatch;
//   - a rank silent for longer than collective_timeout_s after its first event (before it:
//     rendezvous_timeout_s plus a start-up allowance) is hung: the trial fails;
//   - past options.timeout_s (when set) the trial fails as timed out (exit code 124);
//   - when a rank fails after waiting in a collective (its last error: a "comm" failure, or a
//     "timeout" whose details say in_collective) while another still runs but has sent no step for
//     at least kStallS and three of its own step intervals (the longest such, by kStallS or more
//     when there are several), the reason names that one ("; rank 1 sent no step for 8 s"): the
//     rank it waited for. A rank whose own step stalled says so itself;
//   - the first failure (or Stop) names the outcome; later ones are consequences and only logged;
//   - stopping: SIGTERM to every process group (an ssh node: its stdin is closed, the node script
//     ends its ranks; sbatch: scancel, then SIGTERM), SIGKILL to whatever still runs grace_s later;
//   - finished once every process started has exited and the event sockets drained (drain_s at most).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_status.h"

namespace tunebench::launch {

struct SupervisorOptions {
  double grace_s = 3.0;               // after SIGTERM / closed stdin / scancel, before SIGKILL
  double startup_allowance_s = 60.0;  // libtorch/CUDA start-up, on top of rendezvous_timeout_s
  double drain_s = 1.0;               // after the last exit, for the sockets' last lines
  double timeout_s = 0.0;             // 0: none; else the trial fails after this long
};

// What the adapter must do to a process (an index into the plan's processes).
struct Command {
  enum class Kind { Terminate, Kill, CloseStdin, Scancel };
  Kind kind = Kind::Terminate;
  size_t process = 0;
  std::string job_id;  // Scancel: the sbatch job
};

// A line for the runner's log ("rank 1 exited normally", "scancel 42", ...). rank -1: the trial.
struct Note {
  int rank = -1;
  std::string text;
};

// A line a process printed that is worth showing (not the node script's rank-exit reports).
struct OutputLine {
  size_t process = 0;
  bool is_stderr = false;
  std::string text;
};

struct Actions {
  std::vector<Command> commands;
  std::vector<Note> notes;
  std::vector<OutputLine> lines;
  void append(Actions&& more);
};

// How far the trial is: the steps every rank has completed (a link probe: message sizes measured).
struct Progress {
  int step = 0;
  int steps = 0;           // planned (a link probe: sizes to measure)
  double ms_per_step = 0;  // mean since the first completed step seen; 0 until two are seen
  double eta_s = 0;        // remaining steps at that pace; 0 until known
};

// How a trial ended. The words are the same in the session, the window and on the command line.
struct TrialEnd {
  protocol::TrialStatus status = protocol::TrialStatus::Done;  // Done, Failed or Stopped
  // As `tunebench-cli run` exits: 0 done; 130 stopped; 124 timed out; 2 invalid configuration; the
  // failed rank's exit code when it exited with one (1-127); else 1.
  int exit_code = 0;
  std::string reason;  // one sentence (plus " — " and the failed rank's error event); empty when done
  int failed_rank = -1;
  std::string stderr_of;                 // the process whose stderr tail follows ("rank 1")
  std::vector<std::string> stderr_tail;  // its last lines
  // The reason, then "stderr of LABEL:" and the tail, indented: what the CLI prints.
  std::string message() const;
  // A trial that could not be launched at all (invalid configuration: exit code 2).
  static TrialEnd refused(std::string reason, int exit_code = 1);
};

// How a process ended, as waitpid tells it.
struct ProcessExit {
  int exit_code = 0;  // when signal == 0
  int signal = 0;     // > 0: killed by this signal
};

class TrialSupervisor {
 public:
  static constexpr size_t kStderrTailLines = 20;
  // A rank silent in steps for less than this is not called stalled, whatever its pace.
  static constexpr double kStallS = 1.0;

  TrialSupervisor(const config::TrialConfig& config, std::vector<LaunchProcess> processes,
                  std::optional<LinkProbeRange> link_probe = std::nullopt, SupervisorOptions options = {});

  const std::vector<LaunchProcess>& processes() const { return m_procs_spec; }
  const SupervisorOptions& options() const { return m_options; }

  // The adapter started process `i`.
  void launched(size_t i);
  // Process `i` could not be started. `detail`: the adapter's own words, used only when the
  // program exists and is executable (so the usual causes read the same from GUI and CLI).
  Actions start_failed(size_t i, double now, const std::string& detail = "");
  // False once the trial is stopping: the adapter starts no further process.
  bool should_start_more() const { return !m_stopping; }

  // Bytes process `i` wrote; lines are split here. output_closed: the stream ended (flushes a last
  // unterminated line).
  Actions output(size_t i, bool is_stderr, std::string_view bytes, double now);
  Actions output_closed(size_t i, bool is_stderr, double now);
  // Process `i` ended (its remaining output fed first; any unterminated line is flushed here).
  Actions exited(size_t i, ProcessExit exit, double now);
  // An event from a rank (hang check, progress, the rank's last error event).
  void event(const protocol::Event& e, double now);

  // The user's Stop (or the CLI's Ctrl-C). No effect once the trial is ending.
  Actions stop(double now);
  // Timeouts: the hang check, options.timeout_s, SIGKILL after the grace period. Call every ~250 ms.
  Actions tick(double now);

  bool stopping() const { return m_stopping; }
  bool all_exited() const;
  // True once every started process has exited and either no event connection is still open or
  // drain_s has passed since the last exit.
  bool finished(double now, int open_connections);
  Progress progress() const { return m_progress; }
  // The outcome (complete once finished() is true).
  TrialEnd end() const;

 private:
  struct Proc {
    bool launched = false;
    bool running = false;
    std::string partial[2];  // stdout, stderr bytes after the last '\n'
    std::vector<std::string> stderr_tail;
    std::string job_id;  // sbatch
  };
  struct Rank {
    bool exited = false;
    double last_event_s = -1;
    int last_step = -1;
    double first_step_s = -1, last_step_s = -1;  // when its first and latest step events arrived
    int steps_seen = 0;
    int probe_points = 0;
    std::string error_kind, error_message;  // the rank's last error event
    bool waited_for_peers = false;          // that error came from waiting in a collective
  };

  void line(size_t i, bool is_stderr, std::string text, double now, Actions& out);
  void rank_exited(int rank, const std::string& how, bool failed, int code, Actions& out, double now);
  void fail(int rank, std::string reason, int exit_code, double now, Actions& out);
  void begin_stop(double now, Actions& out);
  // "; rank 1 sent no step for 8 s" of the running rank other than `failing` that is stalled
  // longest, or "" (above; whether `failing` waited for it is end()'s to check).
  std::string stalled_rank_clause(int failing, double now) const;
  void update_progress(double now);
  std::string label(size_t i) const { return m_procs_spec[i].label(); }

  config::TrialConfig m_config;
  std::vector<LaunchProcess> m_procs_spec;
  std::optional<LinkProbeRange> m_link_probe;
  SupervisorOptions m_options;
  std::vector<Proc> m_procs;
  std::vector<Rank> m_ranks;

  protocol::TrialStatus m_status = protocol::TrialStatus::Done;  // Failed / Stopped once decided
  std::string m_reason;
  std::string m_stalled_clause;  // stalled_rank_clause at the failure, said when the failing rank waited
  int m_failed_rank = -1;
  int m_exit_code = 0;
  bool m_stopping = false;
  bool m_killed = false;
  double m_stop_started = 0;
  double m_all_exited_at = -1;
  Progress m_progress;
  int m_first_done = -1;
  double m_first_done_s = 0;
};

// Why `program` cannot be run, in words ("no such file", "not executable", "not found in PATH"),
// or "" when it looks runnable.
std::string why_cannot_run(const std::string& program);
// "1", "2.5": seconds as the supervisor's sentences write them.
std::string format_seconds(double s);

}  // namespace tunebench::launch
