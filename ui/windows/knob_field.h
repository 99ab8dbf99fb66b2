// KnobField: the editor of one TrialConfig knob (spin box, check box, combo or line edit, chosen
// from its KnobInfo) with a message line under it that shows a validation problem in red.
#pragma once

#include <QWidget>

#include "core/config/trial_config.h"

class QLabel;

namespace tunebench::ui {

class KnobField : public QWidget {
  Q_OBJECT
 public:
  KnobField(const config::KnobInfo& knob, QWidget* parent = nullptr);

  const config::KnobInfo& knob() const { return m_knob; }
  QString key() const { return QString::fromStdString(m_knob.key); }
  // The value as text, as config::set_knob reads it.
  QString text() const;
  void setText(const QString& text);
  // Shows `message` under the editor and outlines it red; an empty message clears both.
  void setProblem(const QString& message);
  QString problem() const { return m_problem; }
  QWidget* editor() const { return m_editor; }
  static QString tooltipFor(const config::KnobInfo& knob);

 signals:
  void edited();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void applyProblemColor();

  config::KnobInfo m_knob;
  QWidget* m_editor = nullptr;
  QLabel* m_message = nullptr;
  QString m_problem;
};

}  // namespace tunebench::ui
