// RunStatus: the status bar's line about the live trial: "running NAME", then its progress (step,
// rate, time left) with a bar, then how it ended ("… finished", "… stopped", "… failed: reason").
// The trial is named as the user named it, never by its internal id. While nothing has run (and
// after clear(), when another session opens) it is empty and hidden, so nothing is drawn over the
// status bar's messages; the window places it as a permanent widget, right of them.
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
  QString name() const { return m_name; }  // the live (or last) trial's, as the user named it

  void starting(const QString& name);
  void setProgress(const TrialProgress& progress);
  void finished(const TrialOutcome& outcome);
  // Says nothing (hidden): a new session's window has no last run to speak of.
  void clear();

 private:
  void setText(const QString& text);

  QLabel* m_label = nullptr;
  QProgressBar* m_bar = nullptr;
  QString m_name;  // the live trial's name
};

}  // namespace tunebench::ui
