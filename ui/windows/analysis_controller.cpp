#include "ui/windows/analysis_controller.h"

#include <algorithm>

#include <QAction>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTableView>

#include "ui/models/trials_model.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/sweep_dialog.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"

namespace tunebench::ui {

AnalysisController::AnalysisController(MainWindow* window) : QObject(window), m_window(window) {
  setObjectName(QStringLiteral("analysisController"));
  m_provider = [this](int row) { return cachedLog(row); };

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

  auto* investigate = new QAction(QStringLiteral("&Investigate…"), window);
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

  auto* menu = new QMenu(QStringLiteral("&Analysis"), window);
  menu->setObjectName(QStringLiteral("menuAnalysis"));
  menu->addAction(compare);
  menu->addAction(sweep);
  menu->addAction(investigate);
  menu->addAction(fastest);
  if (window->sessionActions()) {
    window->sessionActions()->contextMenu()->addSeparator();
    window->sessionActions()->contextMenu()->addAction(investigate);
  }
  // Before Help, where the menu bar's last entry conventionally stays (found by object name).
  QMenu* help = window->menu(QStringLiteral("menuHelp"));
  if (help)
    window->menuBar()->insertMenu(help->menuAction(), menu);
  else
    window->menuBar()->addMenu(menu);
}

void AnalysisController::setTrialLogProvider(TrialLogProvider provider) {
  m_provider = provider ? std::move(provider) : TrialLogProvider([this](int row) { return cachedLog(row); });
}

std::optional<protocol::TrialLog> AnalysisController::cachedLog(int row) const {
  TrialsModel* model = m_window->trialsModel();
  if (row < 0 || row >= model->rowCount()) return std::nullopt;
  return m_window->trialLogs().log(model->record(row).id);
}

void AnalysisController::compareSelected() {
  QList<int> rows;
  for (const QModelIndex& index : m_window->trialsView()->selectionModel()->selectedRows()) rows << index.row();
  std::sort(rows.begin(), rows.end());
  compareRows(rows);
}

ComparisonWindow* AnalysisController::compareRows(const QList<int>& rows) {
  SessionController* session = m_window->session();
  std::vector<std::optional<protocol::TrialLog>> logs;
  QStringList names, toLoad;
  bool fromSession = false;
  for (int row : rows) {
    const TrialRecord& r = m_window->trialsModel()->record(row);
    names << QString::fromStdString(r.config.name);
    auto log = m_provider(row);
    if ((!log || log->ranks.empty()) && session->storeId(r.id) >= 0) toLoad << r.id;
    if (session->storeId(r.id) >= 0 && session->isForeign()) fromSession = true;
    logs.push_back(std::move(log));
  }
  auto open = [this, names, fromSession](std::vector<std::optional<protocol::TrialLog>> found) -> ComparisonWindow* {
    std::vector<protocol::TrialLog> usable;
    QStringList usedNames, missing;
    for (size_t i = 0; i < found.size(); ++i) {
      if (!found[i] || found[i]->ranks.empty()) {
        missing << names.value(int(i));
        continue;
      }
      usable.push_back(std::move(*found[i]));
      usedNames << names.value(int(i));
    }
    if (usable.empty()) {
      m_window->statusBar()->showMessage(names.isEmpty()
                                             ? QStringLiteral("Select one or more trials in the Trials table first")
                                             : QStringLiteral("No events recorded for the selected trials"),
                                         6000);
      return nullptr;
    }
    if (!missing.isEmpty())
      m_window->statusBar()->showMessage(
          QStringLiteral("Left out (no events): %1").arg(missing.join(QStringLiteral(", "))), 8000);
    return openComparison(std::move(usable), usedNames, fromSession);
  };
  if (toLoad.isEmpty()) return open(std::move(logs));
  // Stored trials load in the background; the cached ones are merged in when they arrive.
  m_window->statusBar()->showMessage(QStringLiteral("Loading %1 trial(s) for the comparison…").arg(toLoad.size()),
                                     4000);
  auto partial = std::make_shared<std::vector<std::optional<protocol::TrialLog>>>(std::move(logs));
  QStringList ids;
  for (int row : rows) ids << m_window->trialsModel()->record(row).id;
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
  auto* w = new ComparisonWindow(m_window);
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
  m_window->launcher()->launch(request, [this](const QStringList& ids) {
    // The name it was queued under (the launcher may have made it unique), never its internal id.
    if (const TrialRecord* r = ids.isEmpty() ? nullptr : m_window->trialsModel()->find(ids.first()))
      m_window->statusBar()->showMessage(QStringLiteral("Queued %1").arg(QString::fromStdString(r->config.name)), 8000);
  });
}

SweepDialog* AnalysisController::openSweepDialog() {
  auto* dialog = new SweepDialog(m_window->form()->config(), m_window);
  dialog->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(dialog, &SweepDialog::queueRequested, this, [this, dialog](const std::vector<config::TrialConfig>& configs) {
    // One request for the whole grid: one check, one preview (when the form's trial came from
    // someone else's session), then every point queued.
    LaunchRequest request;
    request.configs = configs;
    request.what = QStringLiteral("sweep of %1 trials").arg(configs.size());
    request.fromSession = m_window->form()->origin().fromSession;
    request.source = QStringLiteral("sweep");
    QPointer<SweepDialog> guard(dialog);
    if (m_window->launcher()->launch(request, [guard](const QStringList& ids) {
          if (guard) guard->setQueued(ids);
        }) == TrialLauncher::Result::Refused)
      dialog->setRefused(m_window->launcher()->lastMessage());
  });
  connect(m_window, &MainWindow::trialFinished, dialog, &SweepDialog::onTrialFinished);
  connect(dialog, &SweepDialog::sweepFinished, this, &AnalysisController::showSweep);
  dialog->show();
  m_sweep = dialog;
  return dialog;
}

void AnalysisController::investigateSelected() {
  const auto rows = m_window->trialsView()->selectionModel()->selectedRows();
  if (rows.isEmpty()) {
    m_window->statusBar()->showMessage(QStringLiteral("Select a stored trial in the Trials table first"), 6000);
    return;
  }
  investigateRow(rows.first().row());
}

InvestigateWindow* AnalysisController::investigateRow(int row) {
  SessionController* session = m_window->session();
  if (row < 0 || row >= m_window->trialsModel()->rowCount()) return nullptr;
  const qint64 storeId = session->storeId(m_window->trialsModel()->record(row).id);
  if (storeId < 0 || session->path().isEmpty()) {
    m_window->statusBar()->showMessage(QStringLiteral("Only a trial stored in a session can be investigated"), 6000);
    return nullptr;
  }
  // The launcher's answer goes back to the window: a preview to answer, or a refusal that pauses
  // the investigation (it would otherwise wait for a trial that never comes).
  auto window = std::make_shared<QPointer<InvestigateWindow>>();
  auto launch = [this, window](const investigate::TrialRequest& r) {
    const auto result = launchPlanTrial(r, QStringLiteral("investigate"), [window](const QString& reason) {
      if (*window) (*window)->launchRefused(reason);
    });
    if (result == TrialLauncher::Result::AwaitingConfirmation && *window) (*window)->launchWaiting();
  };
  auto* w = new InvestigateWindow(session->path(), storeId, launch, m_window);
  *window = w;
  w->setWindowTitle(QStringLiteral("Investigate %1").arg(QString::fromStdString(m_window->trialsModel()->record(row).config.name)));
  w->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(session, &SessionController::liveTrialStored, w, &InvestigateWindow::onTrialStored);
  w->show();
  // The plan and its budget first; Start runs it.
  if (!w->prepare()) m_window->statusBar()->showMessage(w->errorText(), 8000);
  m_investigation = w;
  return w;
}

TrialLauncher::Result AnalysisController::launchPlanTrial(const investigate::TrialRequest& r, const QString& what,
                                                          TrialLauncher::Refused refused) {
  QPointer<SessionController> guard(m_window->session());
  LaunchRequest request;
  request.configs = {r.config};
  request.what = QStringLiteral("%1: %2").arg(what, QString::fromStdString(r.name));
  request.fromSession = m_window->session()->isForeign();
  request.source = what;
  QStringList tags;
  for (const auto& t : r.tags) tags << QString::fromStdString(t);
  return m_window->launcher()->launch(
      request,
      [guard, tags](const QStringList& ids) {
        if (guard)
          for (const QString& id : ids) guard->annotateTrial(id, QString(), tags);
      },
      std::move(refused));
}

AutotuneDialog* AnalysisController::openAutotuneDialog() {
  SessionController* session = m_window->session();
  if (session->path().isEmpty()) {
    m_window->statusBar()->showMessage(QStringLiteral("Open or create a session file first: the search is kept in it"),
                                       6000);
    return nullptr;
  }
  auto dialog = std::make_shared<QPointer<AutotuneDialog>>();
  auto launch = [this, dialog](const investigate::TrialRequest& r) {
    launchPlanTrial(r, QStringLiteral("tune"), [dialog](const QString& reason) {
      if (*dialog) (*dialog)->launchRefused(reason);
    });
  };
  auto* d = new AutotuneDialog(m_window->form()->config(), session->path(), launch, m_window);
  *dialog = d;
  d->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(session, &SessionController::liveTrialStored, d, &AutotuneDialog::onTrialStored);
  d->show();
  return d;
}

void AnalysisController::showSweep(const QStringList& ids, const std::vector<std::string>& keys) {
  QList<int> rows;
  for (const QString& id : ids)
    if (const int row = m_window->trialsModel()->rowOf(id); row >= 0) rows << row;
  if (ComparisonWindow* w = compareRows(rows)) w->setSweepKeys(keys);
}

}  // namespace tunebench::ui
