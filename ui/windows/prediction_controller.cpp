#include "ui/windows/prediction_controller.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QScrollArea>
#include <QStatusBar>
#include <QTableView>

#include "ui/models/trials_model.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"

namespace tunebench::ui {

PredictionController::PredictionController(MainWindow* window) : QObject(window), m_window(window) {
  m_panel = new PredictionPanel;
  auto* scroll = new QScrollArea;
  scroll->setWidget(m_panel);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* dock = new QDockWidget(QStringLiteral("Prediction"), window);
  dock->setObjectName(QStringLiteral("predictionDock"));
  dock->setWidget(scroll);
  window->addDockWidget(Qt::LeftDockWidgetArea, dock);
  if (auto* trialDock = window->findChild<QDockWidget*>(QStringLiteral("trialDock")))
    window->splitDockWidget(trialDock, dock, Qt::Vertical);
  if (QMenu* view = window->menu(QStringLiteral("menuView"))) view->addAction(dock->toggleViewAction());

  auto* whatIf = new QAction(QStringLiteral("&What if…"), window);
  whatIf->setObjectName(QStringLiteral("actionWhatIf"));
  whatIf->setStatusTip(
      QStringLiteral("Predict the selected trial on other GPUs, GPU counts, links or knobs, next to what it measured"));
  connect(whatIf, &QAction::triggered, this, &PredictionController::whatIfSelected);
  if (QMenu* analysis = window->menu(QStringLiteral("menuAnalysis"))) analysis->addAction(whatIf);

  connect(window->form(), &TrialForm::changed, this, &PredictionController::refresh);
  connect(window->session(), &SessionController::sessionChanged, this, &PredictionController::reloadEvidence);
  connect(window, &MainWindow::trialFinished, this, &PredictionController::reloadEvidence);
  reloadEvidence();
}

void PredictionController::reloadEvidence() {
  predict::Evidence fresh;
  TrialsModel* trials = m_window->trialsModel();
  for (int row = 0; row < trials->rowCount(); ++row) {
    if (trials->record(row).status != TrialRecord::Status::Succeeded) continue;
    if (auto log = m_window->analysis()->logOfRow(row))
      fresh.add(trials->record(row).id.toStdString(), std::make_shared<protocol::TrialLog>(std::move(*log)));
  }
  m_evidence = std::move(fresh);
  m_panel->setEvidence(m_evidence.select([](const predict::MeasuredTrial&) { return true; }));
  refresh();
}

void PredictionController::refresh() {
  m_panel->showPrediction(m_window->form()->config(), m_window->form()->devices());
}

WhatIfDialog* PredictionController::openWhatIf(int row) {
  TrialsModel* trials = m_window->trialsModel();
  if (row < 0 || row >= trials->rowCount()) return nullptr;
  auto log = m_window->analysis()->logOfRow(row);
  predict::Evidence one;
  if (log) one.add(trials->record(row).id.toStdString(), std::make_shared<protocol::TrialLog>(std::move(*log)));
  if (one.trials().empty()) {
    m_window->statusBar()->showMessage(QStringLiteral("The selected trial recorded no configuration to predict from"),
                                       5000);
    return nullptr;
  }
  auto* dialog = new WhatIfDialog(one.trials().front(), m_evidence.trials(), m_window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  m_last = dialog;
  return dialog;
}

void PredictionController::whatIfSelected() {
  const auto rows = m_window->trialsView()->selectionModel()->selectedRows();
  if (rows.isEmpty()) {
    m_window->statusBar()->showMessage(QStringLiteral("Select a trial in the table first"), 5000);
    return;
  }
  openWhatIf(rows.front().row());
}

}  // namespace tunebench::ui
