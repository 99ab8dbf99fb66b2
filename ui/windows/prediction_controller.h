// PredictionController: the main window's predictions (issue 11). It puts a PredictionPanel under
// the trial form, updated whenever a knob changes, and adds "What if…" to the Analysis menu, which
// opens a WhatIfDialog on the selected trial. Both are calibrated by the session's measured trials,
// reloaded when the session changes or a trial finishes. New files only, so that the window itself
// needs two lines (create it; nothing else).
#pragma once

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
  // row has no recorded configuration.
  WhatIfDialog* openWhatIf(int row);

 public slots:
  void whatIfSelected();
  void reloadEvidence();
  void refresh();  // predicts the form's config again

 private:
  MainWindow* m_window;
  PredictionPanel* m_panel = nullptr;
  predict::Evidence m_evidence;
  QPointer<WhatIfDialog> m_last;
};

}  // namespace tunebench::ui
