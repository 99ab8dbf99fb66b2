// LinkProbeController: Trial > "Measure the link…" and the same button in the Prediction dock
// (action(), which the window places in both). It measures the link between the ranks of the form's trial — its world
// size, device, NCCL variables and launcher — with the worker's link probe, stores the probe in the current session as
// a trial ("link probe, 2 x cpu", as `tunebench-cli probe` names it), and the Prediction dock then takes its link
// figures from it.
//
// The probe is an ordinary trial of the window: it goes through the TrialLauncher
// (validation, the device check, the launch preview when it runs on other machines), the queue
// (after a running trial, never beside it), the TrialRunner with launch::plan_launch (the one
// launch path; LaunchContext::link_probe adds the probe's arguments) and the LiveRecorder.
// LinkProbeDialog shows what will be measured, the progress and points, Cancel, and the end; a
// failure (no worker, a rank failing, a refused config) is said there in words.
#pragma once

#include <QObject>
#include <QPointer>

#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"
#include "ui/runner/runner_types.h"
#include "ui/windows/link_probe_dialog.h"  // QPointer needs the complete type
#include "ui/windows/workbench_context.h"

class QAction;

namespace tunebench::ui {

class LinkProbeController : public QObject {
  Q_OBJECT
 public:
  explicit LinkProbeController(const WorkbenchContext& context, QObject* parent = nullptr);

  QAction* action() const { return m_action; }
  // Opens the dialog for the form's trial, or raises the one open.
  LinkProbeDialog* openDialog();
  LinkProbeDialog* dialog() const { return m_dialog; }
  // The probe of the form's trial: link_probe_config(), with `auto` resolved to this machine's
  // device when the ranks run here.
  config::TrialConfig probeConfig() const;
  // The probe's trial id while it waits, runs or has just ended ("" before the first).
  QString trialId() const { return m_trialId; }

 private:
  void measure(const launch::LinkProbeRange& range);
  void cancel();
  void onFinished(const TrialOutcome& outcome);

  WorkbenchContext m_context;
  QAction* m_action = nullptr;
  QPointer<LinkProbeDialog> m_dialog;
  config::TrialConfig m_probe;  // what the open dialog measures
  QString m_trialId;
  bool m_awaitingPreview = false;
  bool m_running = false;
  protocol::TrialLog m_points;  // every rank's probe points of the running probe, as they arrived
};

}  // namespace tunebench::ui
