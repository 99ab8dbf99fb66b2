// TrialRunner: runs one trial as N worker processes (one per rank) and turns their output into
// typed signals. QtCore/QtNetwork only, so the CLI can use it as well as the window.
//
// Lifecycle: start() -> started -> (eventsArrived | logLine | progress)* -> finished, exactly once.
// A rank that fails (non-zero exit, signal, failure to start) fails the trial: the other ranks
// are stopped and the outcome names the rank, the exit in words, its error event and stderr tail.
// A rank silent for longer than collective_timeout_s (after its first event; before it,
// rendezvous_timeout_s plus a start-up allowance) is treated as hung and the trial is stopped.
// Stopping sends SIGTERM to every rank's process group, then SIGKILL after a grace period.
#pragma once

#include <memory>
#include <vector>

#include <QElapsedTimer>

#include "ui/runner/live_source.h"

class QProcess;
class QTemporaryDir;
class QTimer;

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
  std::vector<qint64> pids() const;  // of the ranks started, including ones that already exited
  void setGraceMs(int ms) { m_graceMs = ms; }
  int graceMs() const { return m_graceMs; }
  // Start-up allowance before a rank's first event on top of rendezvous_timeout_s (libtorch and
  // CUDA initialisation are slow); tests shorten it.
  void setStartupAllowanceMs(qint64 ms) { m_startupAllowanceMs = ms; }

 private:
  struct Rank;
  void startRank(int rank, quint16 masterPort, const QString& configPath, const QString& eventsSpec);
  void onRankFinished(int rank, int exitCode, bool crashed);
  void onRankStartFailed(int rank);
  void onEvents(const EventBatch& batch);
  void readOutput(Rank& r, bool stderrStream, bool flushPartial);
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
  double m_firstStepElapsed = 0.0;
};

}  // namespace tunebench::ui
