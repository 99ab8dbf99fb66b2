#include "ui/windows/analysis_controller.h"

#include <algorithm>

#include <QAction>
#include <QItemSelectionModel>
#include <QMenu>

#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/sweep_dialog.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

namespace tunebench::ui {

AnalysisController::AnalysisController(const WorkbenchContext& context, QObject* parent)
    : QObject(parent), m_context(context) {
  setObjectName(QStringLiteral("analysisController"));
  m_provider = [this](int row) { return cachedLog(row); };

  QWidget* window = m_context.dialogParent;  // the actions' shortcuts work in the whole window
  auto* compare = new QAction(QStringLiteral("&Compare selected trials…"), window);
  compare->setObjectName(QStringLiteral("actionCompare"));
  compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compare->setStatusTip(
      QStringLiteral("Compare the selected trials side by side: config diff, metrics, breakdown, diagnosis"));
  connect(compare, &QAction::triggered, this, &AnalysisController::compareSelected);
  auto* sweep = new QAction(QStringLiteral("&Sweep…"), window);
  sweep->setObjectName(QStringLiteral("actionSweep"));
  sweep->setStatusTip(QStringLiteral("Queue a grid of trials over knobs and value lists, then compare them"));
  connect(sweep, &QAction::triggered, this, [this] { openSweepDialog(); });

  auto* investigate = m_investigate = new QAction(QStringLiteral("&Investigate…"), window);
  investigate->setObjectName(QStringLiteral("actionInvestigate"));
  investigate->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
  investigate->setStatusTip(QStringLiteral(
      "Run the forum's hypotheses around the selected stored trial and rank them by measured effect, with the noise"));
  connect(investigate, &QAction::triggered, this, &AnalysisController::investigateSelected);

  auto* fastest = new QAction(QStringLiteral("&Find the fastest…"), window);
  fastest->setObjectName(QStringLiteral("actionAutotune"));
  fastest->setStatusTip(QStringLiteral(
      "Search strategy, batch, accumulation, checkpointing, compression, compile, AMP and loader threads around "
      "the form's trial for the highest tokens/s (short trials first, memory-pruned)"));
  connect(fastest, &QAction::triggered, this, [this] { openAutotuneDialog(); });

  m_menu = new QMenu(QStringLiteral("&Analysis"), window);
  m_menu->setObjectName(QStringLiteral("menuAnalysis"));
  m_menu->addAction(compare);
  m_menu->addAction(sweep);
  m_menu->addAction(investigate);
  m_menu->addAction(fastest);
}

void AnalysisController::setTrialLogProvider(TrialLogProvider provider) {
  m_provider = provider ? std::move(provider) : TrialLogProvider([this](int row) { return cachedLog(row); });
}

std::optional<protocol::TrialLog> AnalysisController::cachedLog(int row) const {
  TrialsModel* model = m_context.trials;
  if (row < 0 || row >= model->rowCount()) return std::nullopt;
  return m_context.live->logs().log(model->record(row).id);
}

void AnalysisController::compareSelected() {
  QList<int> rows;
  for (const QModelIndex& index : m_context.selection->selectedRows()) rows << index.row();
  std::sort(rows.begin(), rows.end());
  compareRows(rows);
}

ComparisonWindow* AnalysisController::compareRows(const QList<int>& rows) {
  SessionController* session = m_context.session;
  std::vector<std::optional<protocol::TrialLog>> logs;
  QStringList names, toLoad, ids;
  bool fromSession = false;
  for (int row : rows) {
    const TrialRecord& r = m_context.trials->record(row);
    names << QString::fromStdString(r.config.name);
    ids << r.id;
    auto log = m_provider(row);
    if ((!log || log->ranks.empty()) && session->storeId(r.id) >= 0) toLoad << r.id;
    if (session->storeId(r.id) >= 0 && session->isForeign()) fromSession = true;
    logs.push_back(std::move(log));
  }
  auto open = [this, session, names, ids, fromSession](std::vector<std::optional<protocol::TrialLog>> found) -> ComparisonWindow* {
    std::vector<protocol::TrialLog> usable;
    QStringList usedNames, missing, stored;
    for (size_t i = 0; i < found.size(); ++i) {
      if (!found[i] || found[i]->ranks.empty()) {
        missing << names.value(int(i));
        continue;
      }
      usable.push_back(std::move(*found[i]));
      usedNames << names.value(int(i));
      if (session->storeId(ids.value(int(i))) >= 0) stored << ids.value(int(i));
    }
    if (usable.empty()) {
      emit statusMessage(names.isEmpty() ? QStringLiteral("Select one or more trials in the Trials table first")
                                         : QStringLiteral("No events recorded for the selected trials"),
                         6000);
      return nullptr;
    }
    if (!missing.isEmpty())
      emit statusMessage(QStringLiteral("Left out (no events): %1").arg(missing.join(QStringLiteral(", "))), 8000);
    ComparisonWindow* w = openComparison(std::move(usable), usedNames, fromSession);
    // Its report is exported from the session file, so it needs every compared trial stored there.
    if (stored.size() == usedNames.size()) {
      w->setReportable(true);
      connect(w, &ComparisonWindow::exportReportRequested, this, [this, stored] { emit exportReportRequested(stored); });
    }
    return w;
  };
  if (toLoad.isEmpty()) return open(std::move(logs));
  // Stored trials load in the background; the cached ones are merged in when they arrive.
  emit statusMessage(QStringLiteral("Loading %1 trial(s) for the comparison…").arg(toLoad.size()), 4000);
  auto partial = std::make_shared<std::vector<std::optional<protocol::TrialLog>>>(std::move(logs));
  session->loadTrialLogs(toLoad, [open, partial, ids, toLoad](std::vector<std::optional<protocol::TrialLog>> loaded) {
    for (int i = 0; i < toLoad.size(); ++i) {
      const int at = int(ids.indexOf(toLoad[i]));
      if (at >= 0 && size_t(i) < loaded.size()) (*partial)[size_t(at)] = std::move(loaded[size_t(i)]);
    }
    open(std::move(*partial));
  });
  return nullptr;
}

ComparisonWindow* AnalysisController::openComparison(std::vector<protocol::TrialLog> logs, const QStringList& names,
                                                     bool fromSession) {
  auto* w = new ComparisonWindow(m_context.dialogParent);
  w->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(w, &ComparisonWindow::followUpRequested, this,
          [this, fromSession](const config::TrialConfig& c, const QString& suggestion) {
            queueFollowUp(c, suggestion, fromSession);
          });
  w->setTrials(std::move(logs), names);
  w->show();
  m_last = w;
  return w;
}

void AnalysisController::queueFollowUp(const config::TrialConfig& config, const QString& suggestion, bool fromSession) {
  LaunchRequest request;
  request.configs = {config};
  request.what = QStringLiteral("follow-up: %1").arg(suggestion);
  request.fromSession = fromSession;
  request.source = QStringLiteral("follow-up: %1").arg(suggestion);
  m_context.launcher->launch(request, [this](const QStringList& ids) {
    // The name it was queued under (the launcher may have made it unique), never its internal id.
    if (const TrialRecord* r = ids.isEmpty() ? nullptr : m_context.trials->find(ids.first()))
      emit statusMessage(QStringLiteral("Queued %1").arg(QString::fromStdString(r->config.name)), 8000);
  });
}

SweepDialog* AnalysisController::openSweepDialog() {
  auto* dialog = new SweepDialog(m_context.form->config(), m_context.dialogParent);
  dialog->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(dialog, &SweepDialog::queueRequested, this, [this, dialog](const std::vector<config::TrialConfig>& configs) {
    // One request for the whole grid: one check, one preview (when the form's trial came from
    // someone else's session), then every point queued.
    LaunchRequest request;
    request.configs = configs;
    request.what = QStringLiteral("sweep of %1 trials").arg(configs.size());
    request.fromSession = m_context.form->origin().fromSession;
    request.source = QStringLiteral("sweep");
    QPointer<SweepDialog> guard(dialog);
    if (m_context.launcher->launch(request, [guard](const QStringList& ids) {
          if (guard) guard->setQueued(ids);
        }) == TrialLauncher::Result::Refused)
      dialog->setRefused(m_context.launcher->lastMessage());
  });
  connect(m_context.live, &LiveTrialTracker::trialFinished, dialog, &SweepDialog::onTrialFinished);
  connect(dialog, &SweepDialog::sweepFinished, this, &AnalysisController::showSweep);
  dialog->show();
  m_sweep = dialog;
  return dialog;
}

void AnalysisController::investigateSelected() {
  const auto rows = m_context.selection->selectedRows();
  if (rows.isEmpty()) {
    emit statusMessage(QStringLiteral("Select a stored trial in the Trials table first"), 6000);
    return;
  }
  investigateRow(rows.first().row());
}

InvestigateWindow* AnalysisController::investigateRow(int row) {
  SessionController* session = m_context.session;
  if (row < 0 || row >= m_context.trials->rowCount()) return nullptr;
  const qint64 storeId = session->storeId(m_context.trials->record(row).id);
  if (storeId < 0 || session->path().isEmpty()) {
    emit statusMessage(QStringLiteral("Only a trial stored in a session can be investigated"), 6000);
    return nullptr;
  }
  // A trial someone else ran is previewed before it runs again; one the user ran here is theirs.
  const bool foreign = session->isForeignTrial(m_context.trials->record(row).id);
  auto* w = new InvestigateWindow(session->path(), storeId, planHooks(QStringLiteral("investigate"), foreign),
                                  session->jobs(), m_context.dialogParent);
  w->setWindowTitle(
      QStringLiteral("Investigate %1").arg(QString::fromStdString(m_context.trials->record(row).config.name)));
  w->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(m_context.live, &LiveTrialTracker::trialFinished, w, &InvestigateWindow::trialEnded);
  connect(m_context.live, &LiveTrialTracker::removedFromQueue, w, &InvestigateWindow::trialEnded);
  connect(w, &InvestigateWindow::failed, this, [this](const QString& message) { emit statusMessage(message, 8000); });
  w->show();
  // The plan and its budget first; Start runs it.
  w->prepare();
  m_investigation = w;
  return w;
}

PlanRun::Hooks AnalysisController::planHooks(const QString& what, bool fromSession) {
  PlanRun::Hooks hooks;
  // The one launch path (TrialLauncher: validation, device check, the launch preview), the plan's
  // tags written as the trial is queued.
  hooks.launch = [this, what, fromSession](const investigate::TrialRequest& r,
                                          std::function<void(const QString&)> queued, std::function<void()> waiting,
                                          std::function<void(const QString&)> refused) {
    QPointer<SessionController> guard(m_context.session);
    LaunchRequest request;
    request.configs = {r.config};
    request.what = QStringLiteral("%1: %2").arg(what, QString::fromStdString(r.name));
    request.fromSession = fromSession;
    request.source = what;
    QStringList tags;
    for (const auto& t : r.tags) tags << QString::fromStdString(t);
    const auto result = m_context.launcher->launch(
        request,
        [guard, tags, queued](const QStringList& ids) {
          if (!guard || ids.isEmpty()) return;
          for (const QString& id : ids) guard->annotateTrial(id, QString(), tags);
          queued(ids.front());
        },
        [refused](const QString& reason) { refused(reason); });
    if (result == TrialLauncher::Result::AwaitingConfirmation) waiting();
  };
  hooks.stop = [this](const QString& recordId) { m_context.live->cancel(recordId); };
  hooks.storeId = [this](const QString& recordId) { return m_context.session->storeId(recordId); };
  return hooks;
}

AutotuneDialog* AnalysisController::openAutotuneDialog() {
  SessionController* session = m_context.session;
  if (session->path().isEmpty()) {
    emit statusMessage(QStringLiteral("Open or create a session file first: the search is kept in it"), 6000);
    return nullptr;
  }
  // The form's config is the user's own unless it was taken from someone else's trial.
  auto* d = new AutotuneDialog(m_context.form->config(), session->path(),
                               planHooks(QStringLiteral("tune"), m_context.form->origin().fromSession), session->jobs(),
                               m_context.dialogParent);
  d->setAttribute(Qt::WA_DeleteOnClose, true);
  // This machine's GPU bounds the search as --device-memory-gib does on the command line.
  const DeviceInventory& devices = m_context.form->devices();
  if (devices.hasGpu()) d->setDeviceMemory(devices.gpus.front().memory_bytes);
  connect(m_context.live, &LiveTrialTracker::trialFinished, d, &AutotuneDialog::trialEnded);
  connect(m_context.live, &LiveTrialTracker::removedFromQueue, d, &AutotuneDialog::trialEnded);
  d->show();
  return d;
}

void AnalysisController::showSweep(const QStringList& ids, const std::vector<std::string>& keys) {
  QList<int> rows;
  for (const QString& id : ids)
    if (const int row = m_context.trials->rowOf(id); row >= 0) rows << row;
  if (ComparisonWindow* w = compareRows(rows)) w->setSweepKeys(keys);
}

}  // namespace tunebench::ui
