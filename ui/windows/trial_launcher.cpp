#include "ui/windows/trial_launcher.h"

#include <algorithm>

#include <QFileInfo>
#include <QSet>

#include "ui/windows/launch_preview.h"
#include "ui/windows/session_controller.h"

namespace tunebench::ui {

TrialLauncher::TrialLauncher(SessionController* session, QWidget* dialogParent, QObject* parent)
    : QObject(parent), m_session(session), m_dialogParent(dialogParent) {}

std::vector<config::Problem> TrialLauncher::problems(const config::TrialConfig& config) const {
  std::vector<config::Problem> out = config::validate(config);
  // This machine's devices matter only to ranks that run here.
  if (config.launcher == config::Launcher::Local)
    for (auto& p : device_problems(config, m_devices)) out.push_back(std::move(p));
  return out;
}

TrialLauncher::Result TrialLauncher::refuse(const QString& message) {
  m_lastMessage = message;
  emit refused(message);
  return Result::Refused;
}

TrialLauncher::Result TrialLauncher::launch(const LaunchRequest& request, Queued queued) {
  if (request.configs.empty()) return refuse(QStringLiteral("%1: nothing to run").arg(request.what));
  // 1. The same checks as the form, for every trial of the request.
  for (const config::TrialConfig& c : request.configs)
    if (const auto found = problems(c); !found.empty())
      return refuse(QStringLiteral("Not started (%1): %2")
                        .arg(request.what, QString::fromStdString(config::describe(found)).trimmed()));
  if (m_preview)
    return refuse(QStringLiteral("Not started (%1): answer the open launch preview first").arg(request.what));

  // 2. Nothing stored in a session someone else made runs unseen, and nothing runs on other
  // machines unseen.
  const bool foreign = request.fromSession && m_session && m_session->isForeign();
  const auto remote = std::find_if(request.configs.begin(), request.configs.end(), [](const config::TrialConfig& c) {
    return c.launcher != config::Launcher::Local;
  });
  if (foreign || remote != request.configs.end()) {
    const config::TrialConfig& shown = foreign ? request.configs.front() : *remote;
    QString preview = launch_preview(shown, m_workerProgram, QStringLiteral("<trial id>"), request.linkProbe);
    if (request.configs.size() > 1) {
      QSet<QString> keys;
      for (const auto& c : request.configs)
        for (const std::string& k : config::differing_knobs(shown, c))
          keys.insert(QString::fromStdString(k));
      QStringList sorted(keys.begin(), keys.end());
      sorted.sort();
      preview.prepend(
          QStringLiteral("%1 trials, one shown below; the others differ from it only in: %2\n\n")
              .arg(request.configs.size())
              .arg(sorted.isEmpty() ? QStringLiteral("nothing (repeats)") : sorted.join(QStringLiteral(", "))));
    }
    // A stranger's config keeps its question (where it came from matters most); the user's own
    // remote trial asks where it will run.
    m_preview = foreign ? new LaunchPreviewDialog(preview, QFileInfo(m_session->path()).fileName(), m_dialogParent)
                        : new LaunchPreviewDialog(preview, remote_launch_title(shown), remote_launch_intro(shown),
                                                  m_dialogParent);
    m_preview->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_preview, &QDialog::finished, this, [this] { m_preview = nullptr; });  // answered: no longer pending
    connect(m_preview, &QDialog::accepted, this, [this, request, queued] {
      m_lastMessage.clear();
      const QStringList ids = enqueueAll(request);
      if (queued) queued(ids);
      emit launched(ids);
    });
    connect(m_preview, &QDialog::rejected, this, [this, request] {
      refuse(QStringLiteral("Not started (%1): cancelled in the launch preview").arg(request.what));
    });
    m_preview->open();  // window-modal, returns at once: a run in progress keeps being drawn
    m_lastMessage = QStringLiteral("%1: waiting for the launch preview").arg(request.what);
    return Result::AwaitingConfirmation;
  }

  // 3. Queue.
  m_lastMessage.clear();
  const QStringList ids = enqueueAll(request);
  if (queued) queued(ids);
  emit launched(ids);
  return Result::Queued;
}

QStringList TrialLauncher::enqueueAll(const LaunchRequest& request) {
  QStringList ids;
  if (!m_enqueue) return ids;
  for (const config::TrialConfig& c : request.configs) {
    const QString id = m_enqueue(c, request);
    if (!id.isEmpty()) ids << id;
  }
  return ids;
}

}  // namespace tunebench::ui
