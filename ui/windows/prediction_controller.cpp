#include "ui/windows/prediction_controller.h"

#include <QAction>
#include <QItemSelectionModel>
#include <QSettings>

#include "ui/models/trials_model.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/target_picker.h"
#include "ui/windows/trial_form.h"

namespace tunebench::ui {

namespace {
// The name a trial goes by in the panel's notes ("probe 'link probe, 2 x cpu'").
std::string label_of(const TrialRecord& r) { return r.config.name.empty() ? r.id.toStdString() : r.config.name; }
}  // namespace

PredictionController::PredictionController(const WorkbenchContext& context, const AnalysisController* analysis,
                                           QObject* parent)
    : QObject(parent), m_context(context), m_analysis(analysis) {
  setObjectName(QStringLiteral("predictionController"));
  m_panel = new PredictionPanel;

  m_whatIf = new QAction(QStringLiteral("&What if…"), this);
  m_whatIf->setObjectName(QStringLiteral("actionWhatIf"));
  m_whatIf->setStatusTip(
      QStringLiteral("Predict the selected trial on other GPUs, GPU counts, links or knobs, next to what it measured"));
  connect(m_whatIf, &QAction::triggered, this, &PredictionController::whatIfSelected);

  m_useForPredictions = new QAction(QStringLiteral("Use for &predictions"), this);
  m_useForPredictions->setObjectName(QStringLiteral("actionUseForPredictions"));
  m_useForPredictions->setCheckable(true);
  m_useForPredictions->setStatusTip(QStringLiteral(
      "Let the selected trial calibrate the predictions (the Prediction dock, What if…); untick to keep it out"));
  connect(m_useForPredictions, &QAction::triggered, this, [this](bool use) {
    const QModelIndexList rows = m_context.selection->selectedRows();
    if (rows.isEmpty()) return;
    const TrialRecord r = m_context.trials->record(rows.first().row());
    QStringList tags = r.tags;
    tags.removeAll(QString::fromLatin1(predict::kNoCalibrationTag));
    if (!use) tags << QString::fromLatin1(predict::kNoCalibrationTag);
    if (!m_context.session->annotateTrial(r.id, r.notes, tags))
      emit statusMessage(m_context.session->errorString(), 8000);
    reloadEvidence();
  });
  connect(m_context.selection, &QItemSelectionModel::selectionChanged, this,
          &PredictionController::updateUseForPredictions);
  updateUseForPredictions();

  // Which GPUs: the detected ones, else the user's last choice (remembered when the window keeps
  // settings).
  if (m_context.useSettings) {
    QSettings settings;
    predict::Target last;
    last.gpu = settings.value(QStringLiteral("prediction/gpu")).toString().toStdString();
    last.link = settings.value(QStringLiteral("prediction/link")).toString().toStdString();
    m_panel->setDefaultTarget(m_context.form->devices(), last);
  }
  connect(m_panel, &PredictionPanel::targetChanged, this, [this] {
    if (m_context.useSettings) {
      const predict::Target t = m_panel->picker()->target();
      QSettings settings;
      settings.setValue(QStringLiteral("prediction/gpu"), QString::fromStdString(t.gpu));
      settings.setValue(QStringLiteral("prediction/link"), QString::fromStdString(t.link));
    }
    refresh();
  });
  connect(m_context.form, &TrialForm::changed, this, &PredictionController::refresh);
  connect(m_context.session, &SessionController::sessionChanged, this, [this] {
    // Another file: its trials are other trials (record ids "s<store id>" repeat across files).
    m_stored.clear();
    m_unusable.clear();
    m_requested.clear();
    reloadEvidence();
  });
  connect(m_context.live, &LiveTrialTracker::trialFinished, this, &PredictionController::reloadEvidence);
  // Tags edited anywhere (Trial > Tags…, another window or process): predict again when the trials
  // kept out change.
  connect(m_context.trials, &QAbstractItemModel::dataChanged, this, [this] {
    if (keptOut() != m_keptOut) reloadEvidence();
  });
  reloadEvidence();
}

QSet<QString> PredictionController::keptOut() const {
  QSet<QString> ids;
  for (int row = 0; row < m_context.trials->rowCount(); ++row) {
    const TrialRecord& r = m_context.trials->record(row);
    if (r.tags.contains(QString::fromLatin1(predict::kNoCalibrationTag))) ids.insert(r.id);
  }
  return ids;
}

void PredictionController::updateUseForPredictions() {
  const QModelIndexList rows = m_context.selection->selectedRows();
  const bool one = rows.size() == 1;
  m_useForPredictions->setEnabled(one);
  m_useForPredictions->setChecked(one && !m_context.trials->record(rows.first().row())
                                              .tags.contains(QString::fromLatin1(predict::kNoCalibrationTag)));
}

void PredictionController::rebuild(QStringList* toLoad) {
  predict::Evidence fresh;
  TrialsModel* trials = m_context.trials;
  SessionController* session = m_context.session;
  for (int row = 0; row < trials->rowCount(); ++row) {
    const TrialRecord& r = trials->record(row);
    if (r.status != protocol::TrialStatus::Done) continue;
    if (r.tags.contains(QString::fromLatin1(predict::kNoCalibrationTag))) {
      fresh.skip(predict::Evidence::kept_out_note(label_of(r)));
      continue;
    }
    if (auto log = m_analysis->logOfRow(row)) {
      fresh.add(label_of(r), std::make_shared<protocol::TrialLog>(std::move(*log)));
    } else if (auto it = m_stored.constFind(r.id); it != m_stored.constEnd()) {
      if (*it) fresh.add(**it);
      else if (m_unusable.contains(r.id)) fresh.skip(m_unusable.value(r.id));
    } else if (toLoad && session->storeId(r.id) >= 0 && !m_requested.contains(r.id)) {
      *toLoad << r.id;
    }
  }
  m_evidence = std::move(fresh);
  m_keptOut = keptOut();
  m_panel->setEvidence(m_evidence.select([](const predict::MeasuredTrial&) { return true; }), m_evidence.notes());
  updateUseForPredictions();
  refresh();
  emit evidenceChanged();
}

void PredictionController::reloadEvidence() {
  QStringList toLoad;
  rebuild(&toLoad);
  SessionController* session = m_context.session;
  if (toLoad.isEmpty() || !session->hasSession()) return;
  m_requested << toLoad;
  ++m_loading;
  QPointer<PredictionController> self(this);
  const QString path = session->path();
  // Each stored trial once: the job reads the logs, they are measured here as they arrive.
  session->loadTrialLogs(toLoad, [self, toLoad, path](std::vector<std::optional<protocol::TrialLog>> logs) {
    if (!self) return;
    --self->m_loading;
    if (self->m_context.session->path() != path) return;  // another session meanwhile
    TrialsModel* trials = self->m_context.trials;
    for (int i = 0; i < toLoad.size(); ++i) {
      const QString& id = toLoad[i];
      self->m_requested.removeAll(id);
      const int row = trials->rowOf(id);
      std::optional<predict::MeasuredTrial> measured;
      std::string why;
      if (row >= 0 && size_t(i) < logs.size() && logs[size_t(i)])
        measured = predict::Evidence::measure(label_of(trials->record(row)),
                                              std::make_shared<protocol::TrialLog>(std::move(*logs[size_t(i)])), &why);
      if (!measured && !why.empty()) self->m_unusable.insert(id, why);
      self->m_stored.insert(id, std::move(measured));
    }
    self->rebuild(nullptr);
  });
}

void PredictionController::refresh() {
  // A form that validation refuses would not run: predicting its defaults' stand-ins would show a
  // figure for a trial that cannot exist (issue 44).
  const std::vector<config::Problem> problems = m_context.form->configProblems();
  if (!problems.empty()) {
    const config::Problem& first = problems.front();
    m_panel->showRefused(QStringLiteral("the form has %1 problem(s) to fix first (%2%3)")
                             .arg(problems.size())
                             .arg(first.key.empty() ? QString() : QString::fromStdString(first.key) + QStringLiteral(": "))
                             .arg(QString::fromStdString(first.message)));
    return;
  }
  m_panel->showPrediction(m_context.form->config(), m_context.form->devices());
}

WhatIfDialog* PredictionController::openWhatIf(int row) {
  TrialsModel* trials = m_context.trials;
  if (row < 0 || row >= trials->rowCount()) return nullptr;
  const TrialRecord& record = trials->record(row);
  auto log = m_analysis->logOfRow(row);
  predict::Evidence one;
  if (log) {
    one.add(label_of(record), std::make_shared<protocol::TrialLog>(std::move(*log)));  // its name, not its id
  } else if (auto it = m_stored.constFind(record.id); it != m_stored.constEnd() && *it) {
    one.add(**it);
  } else if (m_stored.constFind(record.id) == m_stored.constEnd() && m_context.session->storeId(record.id) >= 0) {
    // Stored and not measured yet (the session's trials load in the background): load this one
    // now and open when it is here, rather than saying it has nothing to predict from.
    const QString id = record.id;
    const QString path = m_context.session->path();
    emit statusMessage(QStringLiteral("Loading %1 for What if…").arg(QString::fromStdString(label_of(record))), 4000);
    QPointer<PredictionController> self(this);
    m_context.session->loadTrialLogs({id}, [self, id, path](std::vector<std::optional<protocol::TrialLog>> logs) {
      if (!self || self->m_context.session->path() != path) return;
      const int at = self->m_context.trials->rowOf(id);
      if (at < 0) return;
      std::optional<predict::MeasuredTrial> measured;
      if (!logs.empty() && logs.front())
        measured = predict::Evidence::measure(label_of(self->m_context.trials->record(at)),
                                              std::make_shared<protocol::TrialLog>(std::move(*logs.front())));
      self->m_stored.insert(id, measured);
      self->openWhatIf(at);
    });
    return nullptr;
  }
  if (one.trials().empty()) {
    emit statusMessage(QStringLiteral("The selected trial recorded no configuration to predict from"), 5000);
    return nullptr;
  }
  auto* dialog = new WhatIfDialog(one.trials().front(), m_evidence.trials(), m_context.dialogParent);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  dialog->raise();
  dialog->activateWindow();
  m_last = dialog;
  return dialog;
}

void PredictionController::whatIfSelected() {
  const auto rows = m_context.selection->selectedRows();
  if (rows.isEmpty()) {
    emit statusMessage(QStringLiteral("Select a trial in the table first"), 5000);
    return;
  }
  openWhatIf(rows.front().row());
}

}  // namespace tunebench::ui
