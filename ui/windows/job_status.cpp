#include "ui/windows/job_status.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

#include "ui/runner/background_jobs.h"

namespace tunebench::ui {

JobStatus::JobStatus(BackgroundJobs* jobs, QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("jobStatus"));
  m_label = new QLabel;
  m_label->setObjectName(QStringLiteral("jobLabel"));
  m_bar = new QProgressBar;
  m_bar->setObjectName(QStringLiteral("jobProgress"));
  m_bar->setMaximumWidth(140);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_label);
  layout->addWidget(m_bar);
  setVisible(false);
  connect(jobs, &BackgroundJobs::jobStarted, this, [this](int, const QString& title) {
    m_label->setText(title + QStringLiteral("…"));
    m_bar->setRange(0, 0);  // busy until the job says how far it is
    setVisible(true);
  });
  connect(jobs, &BackgroundJobs::progress, this,
          [this](int, const QString& title, qint64 done, qint64 total, const QString& text) {
            m_label->setText(QStringLiteral("%1: %2").arg(title, text));
            if (total > 0) {
              m_bar->setRange(0, int(std::min<qint64>(total, 1 << 30)));
              m_bar->setValue(int(std::min<qint64>(done, 1 << 30)));
            } else {
              m_bar->setRange(0, 0);
            }
          });
  connect(jobs, &BackgroundJobs::idle, this, [this] { setVisible(false); });
}

QString JobStatus::text() const { return m_label->text(); }

}  // namespace tunebench::ui
