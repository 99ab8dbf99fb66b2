// TrialRunner: runs one trial and turns its processes' output into typed signals. The processes
// come from launch::plan_launch (core/launch, the one definition shared with tunebench-cli): one
// worker per rank on this machine, one ssh connection per host, or one srun/sbatch. QtCore and
// QtNetwork only.
//
// Lifecycle: start() -> started -> (eventsArrived | logLine | progress)* -> finished, exactly once.
// A link probe (TrialRequest::link_probe) is the same plan with the probe's arguments; its progress
// counts measured sizes.
// A rank that fails (non-zero exit, signal, failure to start; remote ranks report their exits
// through the ssh node script) fails the trial: the other ranks are stopped and the outcome names
// the rank, the exit in words, its error event and stderr tail. A lost ssh connection or a failed
// srun/sbatch fails the trial with the node and ssh's/SLURM's last words.
// A rank silent for longer than collective_timeout_s (after its first event; before it,
// rendezvous_timeout_s plus a start-up allowance) is treated as hung and the trial is stopped.
// Stopping sends SIGTERM to every local process group, closes each ssh connection's stdin (the
// node script then ends its ranks), scancels an sbatch job; SIGKILL follows after a grace period.
#pragma once

#include <memory>
#include <vector>

#include <QElapsedTimer>

#include "ui/runner/live_source.h"

class QProcess;
class QTemporaryDir;
class QTimer;

namespace tunebench::launch {
struct LaunchPlan;
}

namespace tunebench::ui {

class EventChannel;

class TrialRunner : public LiveSource {
  Q_OBJECT
 public:
  explicit TrialRunner(QObject* parent = nullptr);
  ~TrialRunner() override;  // kills any ranks still running, synchronously

  // Starts the trial; returns false (and emits finished with the reason) when it cannot start.
  bool start(const TrialRequest& request);
  bool isActive() const override { return m_active; }
  // Stops every rank (SIGTERM, then SIGKILL after graceMs()); finished follows with status Stopped.
  void stop() override;
  // Stops and waits (blocking, at most the grace period plus a little) for every rank to be gone.
  void stopAndWait();

  QString trialId() const { return m_request.id; }
  std::vector<qint64> pids() const;  // of the processes started, including ones that already exited
  void setGraceMs(int ms) { m_graceMs = ms; }
  int graceMs() const { return m_graceMs; }
  // Start-up allowance before a rank's first event on top of rendezvous_timeout_s (libtorch and
  // CUDA initialisation are slow); tests shorten it.
  void setStartupAllowanceMs(qint64 ms) { m_startupAllowanceMs = ms; }

 private:
  struct Rank;
  struct Proc;
  void startProcess(size_t index);
  void onProcessFinished(Proc& p, int exitCode, bool crashed);
  void onProcessStartFailed(Proc& p);
  void rankExited(int rank, const QString& how, bool failed);
  void onEvents(const EventBatch& batch);
  void readOutput(Proc& p, bool stderrStream, bool flushPartial);
  void checkForHang();
  void fail(int rank, const QString& reason);
  void terminateAll();
  void killAll();
  void maybeFinish();
  void emitFinished();
  QString errorEventText(const Rank& r) const;

  TrialRequest m_request;
  std::unique_ptr<QTemporaryDir> m_dir;
  EventChannel* m_channel = nullptr;
  std::vector<std::unique_ptr<Rank>> m_ranks;
  std::vector<std::unique_ptr<Proc>> m_procs;
  std::unique_ptr<launch::LaunchPlan> m_plan;
  QTimer* m_watchdog = nullptr;
  QTimer* m_killTimer = nullptr;
  QTimer* m_drainTimer = nullptr;  // after the last exit, lets the sockets deliver their last lines
  QElapsedTimer m_clock;
  TrialOutcome m_outcome;
  bool m_active = false;
  bool m_stopping = false;
  bool m_finishing = false;
  int m_graceMs = 3000;
  qint64 m_startupAllowanceMs = 60000;
  // progress
  int m_firstStepSeen = -1;
  int m_probePoints = 0;  // a link probe's sizes (the progress total)
  double m_firstStepElapsed = 0.0;
};

}  // namespace tunebench::ui
