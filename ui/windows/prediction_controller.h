// PredictionController: the workbench's predictions. Its PredictionPanel (which the window docks
// under the trial form) is updated whenever a knob changes or its GPU / count / link picker does
// (the detected GPUs by default, else the last choice, remembered where the window keeps settings),
// and its "What if…" action (which the window puts in the Analysis menu) opens a WhatIfDialog on
// the selected trial. Both are calibrated by the session's measured trials and link probes: the
// logs at hand (the AnalysisController's provider: the running trial, replays) and the trials
// stored in the session file, loaded by a background job (each measured once per session),
// reloaded when the session changes or a trial finishes.
#pragma once

#include <QHash>
#include <QSet>
#include <QObject>
#include <QPointer>

#include "core/predict/evidence.h"
#include "ui/windows/prediction_panel.h"
#include "ui/windows/what_if_dialog.h"
#include "ui/windows/workbench_context.h"

class QAction;

namespace tunebench::ui {

class AnalysisController;

class PredictionController : public QObject {
  Q_OBJECT
 public:
  // `analysis` provides the logs at hand of the table's rows.
  PredictionController(const WorkbenchContext& context, const AnalysisController* analysis, QObject* parent = nullptr);

  PredictionPanel* panel() const { return m_panel; }
  QAction* whatIfAction() const { return m_whatIf; }
  // Trial > Use for predictions: checked while the selected trial may calibrate predictions;
  // unticked it carries the no-calibration tag and is left out, said in the panel.
  QAction* useForPredictionsAction() const { return m_useForPredictions; }
  const predict::Evidence& evidence() const { return m_evidence; }
  // Opens the What-if dialog on a row of the trials table; nullptr (with a status message) when the
  // row has no recorded configuration, or while a stored trial is loaded for it (the dialog then
  // opens by itself).
  WhatIfDialog* openWhatIf(int row);
  // Stored trials still being loaded for the evidence (0 when the evidence is complete).
  int loading() const { return m_loading; }

 signals:
  // The evidence changed (a reload, or stored trials arrived) and the panel shows it.
  void evidenceChanged();
  void statusMessage(const QString& text, int timeoutMs);

 public slots:
  void whatIfSelected();
  // Rebuilds the evidence from the succeeded trials; stored ones not yet measured are loaded in
  // the background and added when they arrive.
  void reloadEvidence();
  void refresh();  // predicts the form's config again

 private:
  void rebuild(QStringList* toLoad);

  WorkbenchContext m_context;
  const AnalysisController* m_analysis;
  PredictionPanel* m_panel = nullptr;
  QAction* m_whatIf = nullptr;
  QAction* m_useForPredictions = nullptr;
  void updateUseForPredictions();
  QSet<QString> keptOut() const;  // record ids tagged predict::kNoCalibrationTag
  QSet<QString> m_keptOut;        // as of the last rebuild
  predict::Evidence m_evidence;
  // Stored trials of the current session, measured once: record id -> the trial (nullopt: its log
  // could not be used, with no configuration or not loadable).
  QHash<QString, std::optional<predict::MeasuredTrial>> m_stored;
  QHash<QString, std::string> m_unusable;  // record id -> why its log cannot calibrate
  QStringList m_requested;  // record ids asked of the store and not yet back
  int m_loading = 0;
  QPointer<WhatIfDialog> m_last;
};

}  // namespace tunebench::ui
