#include "ui/windows/run_status.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

#include "ui/windows/live_view.h"

namespace tunebench::ui {

RunStatus::RunStatus(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("runStatus"));
  m_label = new QLabel;
  m_bar = new QProgressBar;
  m_bar->setObjectName(QStringLiteral("runProgress"));
  m_bar->setMaximumWidth(180);
  m_bar->setVisible(false);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_label);
  setVisible(false);
}

QString RunStatus::text() const { return m_label->text(); }

void RunStatus::setText(const QString& text) {
  m_label->setText(text);
  setVisible(!text.isEmpty());
}

void RunStatus::starting(const QString& name) {
  m_name = name.isEmpty() ? QStringLiteral("the trial") : name;
  setText(QStringLiteral("running %1").arg(m_name));
  m_bar->setVisible(true);
  m_bar->setValue(0);
}

void RunStatus::setProgress(const TrialProgress& progress) {
  setText(QStringLiteral("%1: %2").arg(m_name, format_progress(progress)));
  m_bar->setMaximum(std::max(1, progress.steps));
  m_bar->setValue(std::min(progress.step, progress.steps));
}

void RunStatus::finished(const TrialOutcome& outcome) {
  m_bar->setVisible(false);
  if (outcome.status == protocol::TrialStatus::Failed)
    setText(QStringLiteral("%1 failed: %2").arg(m_name, outcome.reason));
  else
    setText(QStringLiteral("%1 %2").arg(m_name, outcome.status == protocol::TrialStatus::Stopped
                                                    ? QStringLiteral("stopped")
                                                    : QStringLiteral("finished")));
}

void RunStatus::clear() {
  m_bar->setVisible(false);
  m_name.clear();
  setText(QString());
}

}  // namespace tunebench::ui
