#include "ui/windows/run_status.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

#include "ui/windows/live_view.h"

namespace tunebench::ui {

RunStatus::RunStatus(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("runStatus"));
  m_label = new QLabel(QStringLiteral("idle"));
  m_bar = new QProgressBar;
  m_bar->setObjectName(QStringLiteral("runProgress"));
  m_bar->setMaximumWidth(180);
  m_bar->setVisible(false);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_label);
}

QString RunStatus::text() const { return m_label->text(); }

void RunStatus::starting(const QString& name) {
  m_label->setText(QStringLiteral("running %1").arg(name));
  m_bar->setVisible(true);
  m_bar->setValue(0);
}

void RunStatus::setProgress(const QString& trialId, const TrialProgress& progress) {
  m_label->setText(QStringLiteral("%1: %2").arg(trialId, format_progress(progress)));
  m_bar->setMaximum(std::max(1, progress.steps));
  m_bar->setValue(std::min(progress.step, progress.steps));
}

void RunStatus::finished(const TrialOutcome& outcome) {
  m_bar->setVisible(false);
  if (outcome.status == protocol::TrialStatus::Failed)
    m_label->setText(QStringLiteral("%1 failed: %2").arg(outcome.trial_id, outcome.reason));
  else
    m_label->setText(QStringLiteral("%1 %2").arg(outcome.trial_id, outcome.status == protocol::TrialStatus::Stopped
                                                                       ? QStringLiteral("stopped")
                                                                       : QStringLiteral("finished")));
}

}  // namespace tunebench::ui
