#include "ui/windows/link_probe_controller.h"

#include <algorithm>

#include <QAction>

#include "core/launch/link_probe.h"
#include "core/predict/link_model.h"
#include "core/predict/render.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

namespace tunebench::ui {

namespace {

QString describe_probe(const config::TrialConfig& p) {
  QString where;
  switch (p.launcher) {
    case config::Launcher::Local:
      where = QStringLiteral("on this machine");
      break;
    case config::Launcher::Ssh: {
      QStringList hosts;
      for (const auto& h : p.ssh_hosts) hosts << QString::fromStdString(h.host);
      where = QStringLiteral("on %1 over SSH").arg(hosts.join(QStringLiteral(", ")));
      break;
    }
    case config::Launcher::Slurm:
      where = QStringLiteral("on %1 SLURM node(s)").arg(p.slurm_nodes);
      break;
  }
  const QString device = p.device == config::Device::Cpu    ? QStringLiteral("CPU processes (Gloo)")
                         : p.device == config::Device::Cuda ? QStringLiteral("GPUs (NCCL)")
                                                            : QStringLiteral("devices the worker picks (auto)");
  QString text = QStringLiteral("All-reduce bus bandwidth between the <b>%1 ranks</b> of the form's trial: %2 %3")
                     .arg(p.world_size)
                     .arg(device, where.toHtmlEscaped());
  if (!p.nccl_env.empty()) {
    QStringList env;
    for (const auto& [k, v] : p.nccl_env) env << QString::fromStdString(k + "=" + v).toHtmlEscaped();
    text += QStringLiteral(", with %1").arg(env.join(QStringLiteral(", ")));
  }
  text += QStringLiteral(
              ". The result is stored in the session as <b>%1</b>, and the Prediction dock uses it for "
              "this link.")
              .arg(QString::fromStdString(p.name).toHtmlEscaped());
  return text;
}

QString gbps(double v) { return QString::number(v, 'f', v < 10 ? 2 : 1) + QStringLiteral(" GB/s"); }

}  // namespace

LinkProbeController::LinkProbeController(const WorkbenchContext& context, QObject* parent)
    : QObject(parent), m_context(context) {
  setObjectName(QStringLiteral("linkProbeController"));
  m_action = new QAction(QStringLiteral("&Measure the link…"), this);
  m_action->setObjectName(QStringLiteral("actionMeasureLink"));
  m_action->setStatusTip(QStringLiteral(
      "Measure all-reduce bus bandwidth between the form's ranks (link probe); predictions then use it"));
  connect(m_action, &QAction::triggered, this, [this] { openDialog(); });

  TrialRunner* runner = m_context.queue->runner();
  connect(m_context.queue, &TrialQueue::trialStarting, this, [this](const QString& id) {
    if (id != m_trialId || m_trialId.isEmpty()) return;
    m_running = true;
    m_points = {};
    if (m_dialog) m_dialog->setRunning(launch::link_probe_points(m_dialog->range()));
  });
  connect(runner, &LiveSource::progress, this, [this](const TrialProgress& p) {
    if (m_running && p.trial_id == m_trialId && m_dialog) m_dialog->setProgress(p.step, p.steps, p.elapsed_s);
  });
  connect(runner, &LiveSource::eventsArrived, this, [this](const EventBatch& batch) {
    if (!m_running) return;
    for (const auto& e : batch)
      if (e.is<protocol::LinkProbe>()) {
        m_points.ranks[e.header.rank].probes.push_back(e.as<protocol::LinkProbe>());
        if (e.header.rank == 0 && m_dialog) m_dialog->addPoint(e.as<protocol::LinkProbe>());  // rank 0's table
      }
  });
  // After the trial's end is in the session file, so the predictions can load it.
  connect(m_context.live, &LiveTrialTracker::trialFinished, this, &LinkProbeController::onFinished);
  connect(m_context.launcher, &TrialLauncher::refused, this, [this](const QString& message) {
    // The probe's own preview was cancelled (not another request refused meanwhile).
    if (!m_awaitingPreview || !message.contains(QStringLiteral("(link probe)"))) return;
    m_awaitingPreview = false;
    if (!m_dialog) return;
    if (message.contains(QStringLiteral("cancelled in the launch preview")))
      m_dialog->setCancelled(QStringLiteral("Cancelled in the launch preview; nothing ran."));
    else
      m_dialog->setFailed(message);
  });
}

config::TrialConfig LinkProbeController::probeConfig() const {
  config::TrialConfig p = launch::link_probe_config(m_context.form->config());
  if (p.device == config::Device::Auto && p.launcher == config::Launcher::Local) {
    // What the worker would pick here: the GPUs when there are any.
    p.device = m_context.form->devices().hasGpu() ? config::Device::Cuda : config::Device::Cpu;
    p.name = launch::link_probe_name(p);
  }
  return p;
}

LinkProbeDialog* LinkProbeController::openDialog() {
  if (m_dialog) {
    m_dialog->raise();
    m_dialog->activateWindow();
    return m_dialog;
  }
  m_probe = probeConfig();
  // Sizes: up to 1 GiB on GPUs (past the largest gradient bucket); the CPU's Gloo is slow.
  const launch::LinkProbeRange defaults{1.0, m_probe.device == config::Device::Cpu ? 16.0 : 1024.0};
  const QString problem =
      m_probe.world_size < 2
          ? QStringLiteral("A link joins two or more ranks: set the form's Ranks (world size) to 2 or more first.")
          : QString();
  m_dialog = new LinkProbeDialog(describe_probe(m_probe), defaults, problem, m_context.dialogParent);
  m_dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_dialog, &LinkProbeDialog::measureRequested, this, &LinkProbeController::measure);
  connect(m_dialog, &LinkProbeDialog::cancelRequested, this, &LinkProbeController::cancel);
  m_dialog->show();  // not modal: the run can be watched (and stopped) meanwhile
  return m_dialog;
}

void LinkProbeController::measure(const launch::LinkProbeRange& range) {
  if (!m_dialog) return;
  m_probe = probeConfig();  // the form may have changed since the dialog opened
  LaunchRequest request;
  request.configs = {m_probe};
  request.what = QStringLiteral("link probe");
  request.source = QStringLiteral("link probe");
  request.linkProbe = range;
  m_trialId.clear();
  m_running = false;
  m_awaitingPreview = true;
  const bool busy = m_context.live->isBusy();
  const auto result = m_context.launcher->launch(request, [this, busy](const QStringList& ids) {
    m_awaitingPreview = false;
    m_trialId = ids.value(0);
    if (m_dialog && !m_running && busy)
      m_dialog->setWaiting(
          QStringLiteral("Queued after the running trial: a probe beside a training run would "
                         "measure the contention, not the link."));
  });
  switch (result) {
    case TrialLauncher::Result::Refused:
      m_awaitingPreview = false;
      m_dialog->setFailed(m_context.launcher->lastMessage());
      break;
    case TrialLauncher::Result::AwaitingConfirmation:
      m_dialog->setWaiting(QStringLiteral("The probe runs commands on other machines: answer the launch preview."));
      break;
    case TrialLauncher::Result::Queued:
      m_awaitingPreview = false;
      break;
  }
}

void LinkProbeController::cancel() {
  if (m_awaitingPreview) {
    if (LaunchPreviewDialog* preview = m_context.launcher->pendingPreview()) preview->reject();
    return;
  }
  if (m_trialId.isEmpty()) return;
  const bool wasRunning = m_running;
  if (!m_context.live->cancel(m_trialId)) return;
  if (!wasRunning && m_dialog) {  // dropped from the queue: it never ran
    m_dialog->setCancelled(QStringLiteral("Cancelled before it started; nothing was measured."));
    m_trialId.clear();
  } else if (m_dialog) {
    m_dialog->setWaiting(QStringLiteral("Stopping the ranks…"));
  }
}

void LinkProbeController::onFinished(const TrialOutcome& outcome) {
  if (m_trialId.isEmpty() || outcome.trial_id != m_trialId) return;
  m_running = false;
  if (!m_dialog) return;
  switch (outcome.status) {
    case protocol::TrialStatus::Done: {
      // The figures the predictions will use: the median over the ranks per size (link_model.h).
      const predict::LinkCurve curve = predict::link_from_probe(m_points, m_probe.name);
      if (!curve.measured()) {
        m_dialog->setFailed(
            QStringLiteral("The probe ended without measuring a size (was the worker started with "
                           "--probe-link?)."));
        break;
      }
      double lo = curve.points.front().second, hi = lo;
      for (const auto& [bytes, bw] : curve.points) {
        lo = std::min(lo, bw);
        hi = std::max(hi, bw);
      }
      m_dialog->setStored(
          QStringLiteral("Stored as <b>%1</b>: all-reduce bus bandwidth %2 to %3 over %4 sizes (%5 to %6; the "
                         "median of the ranks). The Prediction dock now takes this link's figures from it.")
              .arg(QString::fromStdString(m_probe.name).toHtmlEscaped())
              .arg(gbps(lo), gbps(hi))
              .arg(curve.points.size())
              .arg(QString::fromStdString(predict::format_bytes(curve.points.front().first)),
                   QString::fromStdString(predict::format_bytes(curve.points.back().first))));
      break;
    }
    case protocol::TrialStatus::Failed:
      m_dialog->setFailed(QStringLiteral("The probe failed: %1").arg(outcome.reason) +
                          (outcome.stderr_tail.isEmpty()
                               ? QString()
                               : QStringLiteral("\n\nLast lines of its stderr:\n") + outcome.stderr_tail));
      break;
    case protocol::TrialStatus::Stopped:
      m_dialog->setCancelled(
          QStringLiteral("Cancelled. The sizes measured so far are kept in the session as a "
                         "stopped trial; predictions use only finished probes."));
      break;
    default:  // an outcome is done, failed or stopped
      break;
  }
}

}  // namespace tunebench::ui
