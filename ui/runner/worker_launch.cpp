#include "ui/runner/worker_launch.h"

#include <QDir>
#include <QHostAddress>
#include <QTcpServer>

#include "core/launch/worker_program.h"

namespace tunebench::ui {

QString find_worker_program(const QString& applicationDir) {
  const std::string found = launch::find_worker("", applicationDir.toStdString());
  if (!found.empty()) return QString::fromStdString(found);
  return QDir(applicationDir).filePath("tunebench-worker");  // does not exist: the runner says so in plain words
}

quint16 pick_free_port() {
  QTcpServer server;
  if (!server.listen(QHostAddress::LocalHost, 0)) return 0;
  return server.serverPort();
}

}  // namespace tunebench::ui
