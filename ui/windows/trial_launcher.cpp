#include "ui/windows/trial_launcher.h"

#include <algorithm>

#include <QApplication>
#include <QFileInfo>
#include <QSet>

#include "core/config/trial_names.h"
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

TrialLauncher::Result TrialLauncher::launch(const LaunchRequest& request, Queued queued, Refused refused) {
  auto no = [this, &refused](const QString& message) {
    const Result r = refuse(message);
    if (refused) refused(message);
    return r;
  };
  if (request.configs.empty()) return no(QStringLiteral("%1: nothing to run").arg(request.what));
  // 1. The same checks as the form, for every trial of the request.
  for (const config::TrialConfig& c : request.configs)
    if (const auto found = problems(c); !found.empty())
      return no(QStringLiteral("Not started (%1): %2")
                    .arg(request.what, QString::fromStdString(config::describe(found)).trimmed()));
  if (m_preview) {
    m_preview->raise();  // the question still open: in front again
    m_preview->activateWindow();
    return no(QStringLiteral("Not started (%1): answer the open launch preview first").arg(request.what));
  }

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
    connect(m_preview, &QDialog::rejected, this, [this, request, refused] {
      const QString message = QStringLiteral("Not started (%1): cancelled in the launch preview").arg(request.what);
      refuse(message);
      if (refused) refused(message);
    });
    // Not modal: a modal question that the window manager did not raise left every window
    // ignoring clicks. This one blocks nothing, and is put in front with the focus so it is seen.
    m_preview->setWindowModality(Qt::NonModal);
    m_preview->show();
    m_preview->raise();
    m_preview->activateWindow();
    // A message box already open (a session that could not be opened, say) blocks the window and
    // so this preview too: it stays in front, with the focus, or the preview would cover it and
    // ignore every click.
    if (QWidget* box = QApplication::activeModalWidget(); box && box != m_preview) {
      box->raise();
      box->activateWindow();
    }
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
  std::vector<std::string> taken;
  if (m_session)
    for (const QString& name : m_session->trialNames()) taken.push_back(name.toStdString());
  for (config::TrialConfig c : request.configs) {
    c.name = config::unique_trial_name(config::default_trial_name(c), taken);
    taken.push_back(c.name);
    const QString id = m_enqueue(c, request);
    if (!id.isEmpty()) ids << id;
  }
  return ids;
}

}  // namespace tunebench::ui
