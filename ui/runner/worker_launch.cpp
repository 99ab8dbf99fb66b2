#include "ui/runner/worker_launch.h"

#include <QDir>
#include <QFileInfo>
#include <QHostAddress>
#include <QTcpServer>

namespace tunebench::ui {

QString find_worker_program(const QString& applicationDir) {
  const QString fromEnv = qEnvironmentVariable("TUNEBENCH_WORKER");
  if (!fromEnv.isEmpty()) return fromEnv;
  const QDir dir(applicationDir);
  for (const QString& candidate : {dir.filePath("tunebench-worker"), dir.filePath("../worker/tunebench-worker")}) {
    const QFileInfo info(candidate);
    if (info.isExecutable()) return info.canonicalFilePath();
  }
  return dir.filePath("tunebench-worker");  // does not exist: the runner reports it in plain words
}

QStringList worker_arguments(const QString& configPath, const QString& eventsSpec, const QString& trialId) {
  return {"--config", configPath, "--events", eventsSpec, "--trial", trialId};
}

QProcessEnvironment worker_environment(const QProcessEnvironment& base, const config::TrialConfig& config,
                                       int rank, int masterPort, const QString& trialId) {
  QProcessEnvironment env = base;
  // All ranks run on this host, so the local rank is the rank (one GPU per rank on CUDA).
  env.insert("RANK", QString::number(rank));
  env.insert("WORLD_SIZE", QString::number(config.world_size));
  env.insert("LOCAL_RANK", QString::number(rank));
  env.insert("LOCAL_WORLD_SIZE", QString::number(config.world_size));
  env.insert("MASTER_ADDR", "127.0.0.1");
  env.insert("MASTER_PORT", QString::number(masterPort));
  env.insert("TUNEBENCH_TRIAL", trialId);
  for (const auto& [name, value] : config.nccl_env)
    env.insert(QString::fromStdString(name), QString::fromStdString(value));
  return env;
}

quint16 pick_free_port() {
  QTcpServer server;
  if (!server.listen(QHostAddress::LocalHost, 0)) return 0;
  return server.serverPort();
}

}  // namespace tunebench::ui
