// How a rank is started: program, arguments and torchrun-style environment (the worker contract).
//
//   tunebench-worker --config DIR/trial.json --events unix:DIR/events.sock --trial ID
//   env: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT,
//        TUNEBENCH_TRIAL=ID, and the config's nccl_env variables.
// Pure functions, so the contract is tested without starting anything.
#pragma once

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include "core/config/trial_config.h"

namespace tunebench::ui {

// TUNEBENCH_WORKER if set, else tunebench-worker next to this executable, else
// <dir>/../worker/tunebench-worker (the build tree: build/app/gui -> build/app/worker).
QString find_worker_program(const QString& applicationDir);

QStringList worker_arguments(const QString& configPath, const QString& eventsSpec, const QString& trialId);

QProcessEnvironment worker_environment(const QProcessEnvironment& base, const config::TrialConfig& config,
                                       int rank, int masterPort, const QString& trialId);

// A TCP port on 127.0.0.1 that was free a moment ago (for MASTER_PORT); 0 when none could be bound.
quint16 pick_free_port();

}  // namespace tunebench::ui
