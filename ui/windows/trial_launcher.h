// TrialLauncher: the one way a trial starts. Run and Queue (the form), a diagnosis follow-up, a
// sweep and "run again" all hand a LaunchRequest to launch(), which applies the same rules in the
// same order:
//   1. config::validate, then device_problems (the form's device check): a CUDA trial on a
//      CPU-only machine, or more ranks than devices, is refused with the reason, nothing queued;
//   2. a config taken from a trial stored in someone else's session file (fromSession, and the
//      current session is foreign) is shown first: every rank's argv and environment in a
//      LaunchPreviewDialog, not modal (it blocks no window; it is raised and given the focus, so it
//      is seen; Cancel the default); the trials are queued when the user accepts, dropped when they
//      cancel. A trial of the user's own that runs
//      on other machines (launcher ssh or slurm) is shown the same way, asking "Run on gpu1, gpu2
//      over SSH?": the ssh commands and the scripts the hosts run, or srun's command / the sbatch
//      script. Local trials of the user's own are not previewed. One preview per request (a sweep);
//   3. the trials are queued in order (the queue starts the first when idle), each under a name
//      of its own: a preset's name on a config that is no longer that preset becomes a description
//      of it (config::default_trial_name), and a name the session already has gets " #2", " #3".
// A link probe (LaunchRequest::linkProbe) goes the same way: its trial is queued with the probe's
// range, and its ranks measure the link instead of training.
// The outcome is reported as launched / refused signals (also for requests decided at once) and
// to the request's own callback.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QStringList>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"
#include "ui/runner/device_inventory.h"
#include "ui/windows/launch_preview.h"  // QPointer needs the complete type

class QWidget;

namespace tunebench::ui {

class SessionController;

struct LaunchRequest {
  std::vector<config::TrialConfig> configs;  // one trial, or a sweep's points
  QString what;                              // "Run", "follow-up: grad_accum 2", "sweep"
  bool fromSession = false;                  // taken from (or derived from) a stored trial
  QString source = QStringLiteral("live");   // recorded with each trial
  // Set: the trials are link probes (tunebench-worker --probe-link over this range of sizes).
  std::optional<launch::LinkProbeRange> linkProbe;
};

class TrialLauncher : public QObject {
  Q_OBJECT
 public:
  enum class Result { Queued, AwaitingConfirmation, Refused };
  // Queues one trial (a row in the table, the store, the queue) of the request; returns its id.
  using Enqueue = std::function<QString(const config::TrialConfig& config, const LaunchRequest& request)>;

  TrialLauncher(SessionController* session, QWidget* dialogParent, QObject* parent = nullptr);

  void setDevices(const DeviceInventory& devices) { m_devices = devices; }
  void setEnqueue(Enqueue enqueue) { m_enqueue = std::move(enqueue); }
  void setWorkerProgram(const QString& program) { m_workerProgram = program; }

  // Called with the queued trials' ids once they are queued (at once, or after the preview).
  using Queued = std::function<void(const QStringList& ids)>;
  // Called with the reason when the request is not started: refused at once, or cancelled in the
  // preview later.
  using Refused = std::function<void(const QString& reason)>;

  // Returns what happened at once; `queued` runs when (if ever) the trials are queued, `refused`
  // when they will not be.
  Result launch(const LaunchRequest& request, Queued queued = {}, Refused refused = {});
  // Validation and device problems of one config, as launch() checks them.
  std::vector<config::Problem> problems(const config::TrialConfig& config) const;
  // The preview waiting for an answer, if any.
  LaunchPreviewDialog* pendingPreview() const { return m_preview; }
  QString lastMessage() const { return m_lastMessage; }

 signals:
  void launched(const QStringList& ids);
  void refused(const QString& message);

 private:
  QStringList enqueueAll(const LaunchRequest& request);
  Result refuse(const QString& message);

  SessionController* m_session;
  QWidget* m_dialogParent;
  DeviceInventory m_devices;
  Enqueue m_enqueue;
  QString m_workerProgram;
  QPointer<LaunchPreviewDialog> m_preview;
  QString m_lastMessage;
};

}  // namespace tunebench::ui
