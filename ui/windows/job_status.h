// JobStatus: the status bar's view of the background jobs (opening, loading, importing,
// exporting), like hotspot's parser progress: the running job's title and what it is doing, and
// a bar that is busy until the job says how far it is. Hidden while no job runs.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;

namespace tunebench::ui {

class BackgroundJobs;

class JobStatus : public QWidget {
  Q_OBJECT
 public:
  explicit JobStatus(BackgroundJobs* jobs, QWidget* parent = nullptr);

  QString text() const;

 private:
  QLabel* m_label = nullptr;
  QProgressBar* m_bar = nullptr;
};

}  // namespace tunebench::ui
