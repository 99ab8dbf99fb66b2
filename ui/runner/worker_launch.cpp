#include "ui/runner/worker_launch.h"

#include <QDir>

#include "core/launch/worker_program.h"

namespace tunebench::ui {

QString find_worker_program(const QString& applicationDir) {
  const std::string found = launch::find_worker("", applicationDir.toStdString());
  if (!found.empty()) return QString::fromStdString(found);
  return QDir(applicationDir).filePath("tunebench-worker");  // does not exist: the runner says so in plain words
}

}  // namespace tunebench::ui
