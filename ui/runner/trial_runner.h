// TrialRunner: runs one trial and turns its processes' output into typed signals. A thin Qt
// adapter: the processes come from launch::prepare_launch (core/launch, shared with
// tunebench-cli): one worker per rank on this machine, one ssh connection per host, or one
// srun/sbatch, each a QProcess in its own process group. What they print, how they end, the events
// and Stop go to a launch::TrialSupervisor, which decides the outcome and says what to do
// (SIGTERM, SIGKILL, close an ssh connection's stdin, scancel); this class only carries that out.
// So the outcome (status, exit code, reason, failed rank, stderr tail) is the CLI's to the word.
// QtCore and QtNetwork only.
//
// Lifecycle: start() -> started -> (eventsArrived | logLine | progress)* -> finished, exactly once.
// A link probe (TrialRequest::link_probe) is the same plan with the probe's arguments; its progress
// counts measured sizes. The rules (failures, hangs, stopping) are in core/launch/trial_supervisor.h.
//
// A script's kernel-sampled window names a torch.profiler trace (megabytes of JSON): a batch of
// events holding such a step is read and folded in (launch::KernelTraces) on a thread of its own,
// and the batches after it wait for it, so the events keep their order and the GUI thread never
// parses a trace. The end of the trial waits for what is still being read.
#pragma once

#include <deque>
#include <future>
#include <memory>
#include <vector>

#include <QElapsedTimer>

#include "ui/runner/live_source.h"

class QProcess;
class QTimer;

namespace tunebench::launch {
struct Actions;
class KernelTraces;
class TrialDir;
class TrialSupervisor;
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
  struct Proc;
  void startProcess(size_t index);
  void onProcessFinished(size_t index, int exitCode, bool crashed);
  void onProcessStartFailed(size_t index);
  void readOutput(size_t index, bool stderrStream);
  void onEvents(const EventBatch& batch);
  void foldNext();
  void onFolded(quint64 fold);
  void drainFolds();
  void deliver(const EventBatch& batch);
  void onTick();
  void carryOut(launch::Actions&& actions);
  void maybeFinish();
  void emitFinished();
  double now() const { return m_clock.elapsed() / 1000.0; }

  TrialRequest m_request;
  std::unique_ptr<launch::TrialDir> m_dir;
  EventChannel* m_channel = nullptr;
  std::vector<std::unique_ptr<Proc>> m_procs;  // by plan index
  std::unique_ptr<launch::TrialSupervisor> m_supervisor;
  std::unique_ptr<launch::KernelTraces> m_kernelTraces;  // a script's kernel-sampled steps, folded in
  std::deque<EventBatch> m_unfolded;  // batches waiting behind a trace being read, in order
  std::future<EventBatch> m_fold;     // valid while a batch's traces are read off the GUI thread
  quint64 m_foldId = 0;               // the fold whose result onFolded takes; others are stale
  QTimer* m_watchdog = nullptr;  // the supervisor's clock tick
  QElapsedTimer m_clock;
  TrialOutcome m_outcome;
  bool m_active = false;
  bool m_finishing = false;
  quint64 m_run = 0;  // counts start(): a queued finish belongs to one trial
  int m_graceMs = 3000;
  qint64 m_startupAllowanceMs = 60000;
};

}  // namespace tunebench::ui
