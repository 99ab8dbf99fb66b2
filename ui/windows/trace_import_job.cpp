#include "ui/windows/trace_import_job.h"

#include <QMetaObject>

namespace tunebench::ui {

TraceImportJob::TraceImportJob(const QStringList& files, import::TraceImportOptions options, QObject* parent)
    : QObject(parent), m_files(files), m_options(std::move(options)) {}

TraceImportJob::~TraceImportJob() {
  m_cancel = true;
  if (m_thread.joinable()) m_thread.join();
}

void TraceImportJob::start() {
  if (m_thread.joinable()) return;
  std::vector<std::string> paths;
  for (const QString& f : m_files) paths.push_back(f.toStdString());
  import::TraceImportOptions options = m_options;
  options.progress = [this](int64_t done, int64_t total) {
    const qint64 mb = done >> 20;
    if (m_posted.exchange(mb) != mb)
      QMetaObject::invokeMethod(
          this, [this, done, total] { emit progress(done, total); }, Qt::QueuedConnection);
    return !m_cancel.load();
  };
  // Posted events die with `this`, and the destructor joins: the thread never outlives the job.
  m_thread = std::thread([this, paths = std::move(paths), options = std::move(options)] {
    try {
      auto trial = std::make_shared<import::TraceTrial>(import::read_trace_trial(paths, options));
      QMetaObject::invokeMethod(
          this,
          [this, trial] {
            m_trial = std::make_unique<import::TraceTrial>(std::move(*trial));
            emit succeeded();
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(
          this, [this, message] { emit failed(message); }, Qt::QueuedConnection);
    }
  });
}

}  // namespace tunebench::ui
