// RunStatus: the status bar's line about the live trial: "running NAME", then its progress (step,
// rate, time left) with a bar, then how it ended ("… finished", "… stopped", "… failed: reason").
#pragma once

#include <QWidget>

#include "ui/runner/runner_types.h"

class QLabel;
class QProgressBar;

namespace tunebench::ui {

class RunStatus : public QWidget {
  Q_OBJECT
 public:
  explicit RunStatus(QWidget* parent = nullptr);

  // The bar sits apart from the text (at the status bar's right, beside the permanent widgets).
  QProgressBar* bar() const { return m_bar; }
  QString text() const;

  void starting(const QString& name);
  void setProgress(const QString& trialId, const TrialProgress& progress);
  void finished(const TrialOutcome& outcome);

 private:
  QLabel* m_label = nullptr;
  QProgressBar* m_bar = nullptr;
};

}  // namespace tunebench::ui
