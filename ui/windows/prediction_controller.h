// PredictionController: the main window's predictions (issue 11). It puts a PredictionPanel under
// the trial form, updated whenever a knob changes, and adds "What if…" to the Analysis menu, which
// opens a WhatIfDialog on the selected trial. Both are calibrated by the session's measured trials
// and link probes: the events at hand (the window's cache: the running trial, replays) and the
// trials stored in the session file, loaded by a background job (each measured once per session),
// reloaded when the session changes or a trial finishes. The window creates it after the
// AnalysisController, whose menu it adds to.
#pragma once

#include <QHash>
#include <QObject>
#include <QPointer>

#include "core/predict/evidence.h"
#include "ui/windows/prediction_panel.h"
#include "ui/windows/what_if_dialog.h"

namespace tunebench::ui {

class MainWindow;

class PredictionController : public QObject {
  Q_OBJECT
 public:
  explicit PredictionController(MainWindow* window);

  PredictionPanel* panel() const { return m_panel; }
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

 public slots:
  void whatIfSelected();
  // Rebuilds the evidence from the succeeded trials; stored ones not yet measured are loaded in
  // the background and added when they arrive.
  void reloadEvidence();
  void refresh();  // predicts the form's config again

 private:
  void rebuild(QStringList* toLoad);

  MainWindow* m_window;
  PredictionPanel* m_panel = nullptr;
  predict::Evidence m_evidence;
  // Stored trials of the current session, measured once: record id -> the trial (nullopt: its log
  // could not be used, with no configuration or not loadable).
  QHash<QString, std::optional<predict::MeasuredTrial>> m_stored;
  QStringList m_requested;  // record ids asked of the store and not yet back
  int m_loading = 0;
  QPointer<WhatIfDialog> m_last;
};

}  // namespace tunebench::ui
