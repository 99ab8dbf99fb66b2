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
#include "ui/windows/sweep_dialog.h"
#include "ui/windows/trial_form.h"

namespace tunebench::ui {

AnalysisController::AnalysisController(MainWindow* window) : QObject(window), m_window(window) {
  setObjectName(QStringLiteral("analysisController"));
  m_provider = [this](int row) { return cachedLog(row); };

  auto* compare = new QAction(QStringLiteral("&Compare selected trials…"), window);
  compare->setObjectName(QStringLiteral("actionCompare"));
  compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compare->setStatusTip(QStringLiteral("Compare the selected trials side by side: config diff, metrics, breakdown, diagnosis"));
  connect(compare, &QAction::triggered, this, &AnalysisController::compareSelected);
  auto* sweep = new QAction(QStringLiteral("&Sweep…"), window);
  sweep->setObjectName(QStringLiteral("actionSweep"));
  sweep->setStatusTip(QStringLiteral("Queue a grid of trials over knobs and value lists, then compare them"));
  connect(sweep, &QAction::triggered, this, [this] { openSweepDialog(); });

  auto* menu = new QMenu(QStringLiteral("&Analysis"), window);
  menu->setObjectName(QStringLiteral("menuAnalysis"));
  menu->addAction(compare);
  menu->addAction(sweep);
  // Before Help, where the menu bar's last entry conventionally stays.
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
  std::vector<protocol::TrialLog> logs;
  QStringList names, missing;
  for (int row : rows) {
    const TrialRecord& r = m_window->trialsModel()->record(row);
    auto log = m_provider(row);
    if (!log || log->ranks.empty()) {
      missing << QString::fromStdString(r.config.name);
      continue;
    }
    logs.push_back(std::move(*log));
    names << QString::fromStdString(r.config.name);
  }
  if (logs.empty()) {
    m_window->statusBar()->showMessage(rows.isEmpty() ? QStringLiteral("Select one or more trials in the Trials table first")
                                                      : QStringLiteral("No events recorded for the selected trials"),
                                       6000);
    return nullptr;
  }
  if (!missing.isEmpty())
    m_window->statusBar()->showMessage(QStringLiteral("Left out (no events): %1").arg(missing.join(QStringLiteral(", "))), 8000);
  return openComparison(std::move(logs), names);
}

ComparisonWindow* AnalysisController::openComparison(std::vector<protocol::TrialLog> logs, const QStringList& names) {
  auto* w = new ComparisonWindow(m_window);
  w->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(w, &ComparisonWindow::followUpRequested, this, &AnalysisController::queueFollowUp);
  w->setTrials(std::move(logs), names);
  w->show();
  m_last = w;
  return w;
}

void AnalysisController::queueFollowUp(const config::TrialConfig& config, const QString& suggestion) {
  const QString id = m_window->queueConfig(config);
  m_window->statusBar()->showMessage(id.isEmpty() ? QStringLiteral("Not queued: %1 is not a valid trial").arg(suggestion)
                                                  : QStringLiteral("Queued %1 (%2)").arg(QString::fromStdString(config.name), id),
                                     8000);
}

SweepDialog* AnalysisController::openSweepDialog() {
  auto* dialog = new SweepDialog(m_window->form()->config(), m_window);
  dialog->setAttribute(Qt::WA_DeleteOnClose, true);
  connect(dialog, &SweepDialog::queueRequested, this, [this, dialog](const std::vector<config::TrialConfig>& configs) {
    QStringList ids;
    for (const auto& c : configs) {
      const QString id = m_window->queueConfig(c);
      if (!id.isEmpty()) ids << id;
    }
    dialog->setQueued(ids);
  });
  connect(m_window, &MainWindow::trialFinished, dialog, &SweepDialog::onTrialFinished);
  connect(dialog, &SweepDialog::sweepFinished, this, &AnalysisController::showSweep);
  dialog->show();
  m_sweep = dialog;
  return dialog;
}

void AnalysisController::showSweep(const QStringList& ids, const std::vector<std::string>& keys) {
  QList<int> rows;
  for (const QString& id : ids)
    if (const int row = m_window->trialsModel()->rowOf(id); row >= 0) rows << row;
  if (ComparisonWindow* w = compareRows(rows)) w->setSweepKeys(keys);
}

}  // namespace tunebench::ui
